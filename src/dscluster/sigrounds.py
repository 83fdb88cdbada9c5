"""The live rounds' own signature tables, in the order signatures.py places them: after the disk's signatures, before
the exception messages' (sigmessages.py), the usage errors and every generic answer.

Each table is one family of failures that broken users' scripts, run for real (tests/data/live), showed (issue 45):
ZeRO-3's partitioned parameters, activation checkpointing, several models in one script, sparse gradients and
mixture-of-experts layers, transformers models built from configs, a customised Trainer, numpy and pandas data,
normalization layers and buffers, process groups and stores built by hand, attention and its masks, loss functions'
contracts (whose backward-not-scalar signatures.py reads after the exception messages: sigloss.LOSS_AFTER_MESSAGES),
exporting a trained model, iterable and streaming datasets, convolution models and image tensors, numbers that
stopped being finite (NaN, inf and the scripts' own guards), recurrent models and their packed sequences, dtypes and
mixed precision in the user's own code, learning-rate schedulers and ds_config's optimizer and scheduler sections,
contrastive training across ranks, quantization and pruning in a training script, multi-task training and several
loaders in one loop, tensor indexing, gather / scatter, masking and top-k in the user's own code, how custom
nn.Modules register their submodules, parameters and buffers, weight tying and state_dict surgery, optimizer
parameter groups and optimizer state, DeepSpeed inference and text generation, failures only a GPU shows (pinned CUDA
tensors, cuBLAS after an earlier kernel's fault, DeepSpeed's optimizer wrapper's attributes), gradient hooks and
gradient inspection in the user's loop, linear algebra, FFT and complex numbers in the user's model code, tensor
shape manipulation in the user's model code. Their order matters only where two could read one log: a table named
earlier here wins, which each table's docstring says where it relies on it (the loss table comes before the
several-models one: loss-bce-target-dtype, bound to binary_cross_entropy_with_logits' frame, before
inplace-result-type-cast's same words)."""

from __future__ import annotations

from dscluster.sigactckpt import ACTCKPT_SIGNATURES
from dscluster.sigamp import AMP_SIGNATURES
from dscluster.sigattn import ATTN_SIGNATURES
from dscluster.sigcontrastive import CONTRASTIVE_SIGNATURES
from dscluster.sigdist import DIST_SIGNATURES
from dscluster.sigexport import EXPORT_SIGNATURES
from dscluster.siggen import GEN_SIGNATURES
from dscluster.siggpu import GPU_SIGNATURES
from dscluster.siggradhook import GRADHOOK_SIGNATURES
from dscluster.sighfconfig import HFCONFIG_SIGNATURES
from dscluster.sighftrainer import HFTRAINER_SIGNATURES
from dscluster.sigindex import INDEX_SIGNATURES
from dscluster.siglinalg import LINALG_SIGNATURES
from dscluster.sigloss import LOSS_SIGNATURES
from dscluster.sigmodule import MODULE_SIGNATURES
from dscluster.sigmulti import MULTI_SIGNATURES
from dscluster.sigmultitask import MULTITASK_SIGNATURES
from dscluster.signonfinite import NONFINITE_SIGNATURES
from dscluster.signorm import NORM_SIGNATURES
from dscluster.signumpy import NUMPY_SIGNATURES
from dscluster.sigpgroup import PGROUP_SIGNATURES
from dscluster.sigquant import QUANT_SIGNATURES
from dscluster.sigrdzv import RDZV_SIGNATURES
from dscluster.sigrnn import RNN_SIGNATURES
from dscluster.sigsched import SCHED_SIGNATURES
from dscluster.sigshape import SHAPE_SIGNATURES
from dscluster.sigsparse import SPARSE_SIGNATURES
from dscluster.sigstream import STREAM_SIGNATURES
from dscluster.sigtying import TYING_SIGNATURES
from dscluster.sigtypes import Signature
from dscluster.sigvision import VISION_SIGNATURES
from dscluster.sigzero3 import ZERO3_SIGNATURES

ROUND_SIGNATURES: tuple[Signature, ...] = (
    *ZERO3_SIGNATURES, *ACTCKPT_SIGNATURES, *LOSS_SIGNATURES, *MULTI_SIGNATURES, *SPARSE_SIGNATURES, *HFCONFIG_SIGNATURES,
    *HFTRAINER_SIGNATURES, *NUMPY_SIGNATURES, *NORM_SIGNATURES, *RDZV_SIGNATURES,
    *ATTN_SIGNATURES, *EXPORT_SIGNATURES, *STREAM_SIGNATURES, *VISION_SIGNATURES, *NONFINITE_SIGNATURES,
    *RNN_SIGNATURES, *AMP_SIGNATURES, *SCHED_SIGNATURES, *CONTRASTIVE_SIGNATURES, *QUANT_SIGNATURES,
    *MULTITASK_SIGNATURES, *INDEX_SIGNATURES, *MODULE_SIGNATURES, *TYING_SIGNATURES, *PGROUP_SIGNATURES,
    *GEN_SIGNATURES, *GPU_SIGNATURES, *GRADHOOK_SIGNATURES, *LINALG_SIGNATURES, *DIST_SIGNATURES, *SHAPE_SIGNATURES,
)
