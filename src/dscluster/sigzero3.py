"""Failure signatures of DeepSpeed ZeRO-3's partitioned parameters reached by the user's own code, from round 192 of
issue 45 (live: broken users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8): ZeRO-3's ds_* attributes read
on a parameter it never converted, a gradient read from p.grad (which ZeRO keeps in its own partitions), a rank's flat
partition (ds_tensor) taken for the whole weight, deepspeed.zero.Init's early config and its already partitioned
children, and save_16bit_model saving nothing. Each pattern is the wording of the component that prints it (CPython's
AttributeError under the source line it shows, torch.nn.init's dimension checks under zero.Init's frames, DeepSpeed's
runtime/engine.py warning), never one log's. sigrounds.py places this table first among the exception messages'."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import CARET_LINE, Signature
from dscluster.sigtypes import sig as _sig

# DeepSpeed's init_distributed ran (its INFO line, shown where the log level lets it): the process group was up, and a
# world of one in zero.Init's config is DeepSpeed 0.9.x's early count under from_pretrained (ds-world-size-one's).
_INIT_DIST = re.compile(r"Initializing TorchBackend in DeepSpeed")


def _dist_was_up(m: re.Match, texts: Iterable[str]) -> bool:
    return any(_INIT_DIST.search(t) for t in texts)


# torch's UserWarning when a non-leaf tensor's .grad is read (TensorBody.h): "The .grad attribute of a Tensor that
# is not a leaf Tensor is being accessed. Its .grad attribute won't be populated during autograd.backward()...",
# then the warning's source line reading `.grad.<attr>` (which fails with param-grad-none's AttributeError).
# Before param-grad-none: the same AttributeError, but of an activation, not a parameter (round 222).
# Read with the lines before the error (ZERO3_READS_BEFORE): torch's warning stands before the traceback.
NONLEAF_GRAD_NONE = _sig(
    "nonleaf-grad-none", r"The \.grad attribute of a Tensor that is not a leaf Tensor is being accessed[^\n]{0,900}\n"
    r"(?P<ev>[^\n]{0,300}\.grad\.\w{1,60}\b[^\n]{0,300})",
    "The script read .grad of a non-leaf tensor (an activation, a model output, a tensor computed from "
    "parameters such as w * 2 or p.to(...)) after backward and found None: autograd keeps gradients only for "
    "leaf tensors (parameters, inputs created with requires_grad=True) unless retain_grad() was called on the "
    "tensor before backward; torch warned (UserWarning) on that very line.",
    "Call t.retain_grad() on the activation before loss.backward() (or register a hook, t.register_hook(fn), to "
    "receive its gradient), or read the gradient of the leaf you meant (the parameter itself, not a copy or "
    "view of it). A restart fails the same way.", retry=False)

ZERO3_SIGNATURES: tuple[Signature, ...] = (
    # The user's own code (a frame outside deepspeed/) reads a ZeRO-3 attribute (ds_numel, ds_shape, ds_tensor...)
    # that partition_parameters.py's _convert_to_deepspeed_param has not given the parameter yet: a model built
    # outside deepspeed.zero.Init read before deepspeed.initialize. DeepSpeed's own code meeting such a parameter
    # (its frames: a layer added after initialize) stays zero3-param-not-registered's.
    _sig("zero3-ds-attr-unconverted", r"File \"(?![^\"\n]*deepspeed[/\\])[^\"\n]{1,300}\", line \d+, in [^\n]{1,200}\n"
         r"[^\n]{0,300}\.ds_(?P<attr>\w{1,40})\b[^\n]{0,300}\n" + CARET_LINE +
         r"(?P<ev>[^\n]{0,200}AttributeError: '(?:Parameter|Tensor)' object has no attribute 'ds_(?P=attr)')",
         "The script read a DeepSpeed ZeRO-3 attribute (ds_numel, ds_shape, ds_tensor...) of a parameter ZeRO-3 has "
         "not converted: DeepSpeed gives a parameter its ds_* attributes only when it partitions it, that is when the "
         "model is built inside deepspeed.zero.Init or when deepspeed.initialize takes it over under ZeRO stage 3. "
         "The model was built outside zero.Init and read before initialize, the config is not stage 3, or the "
         "parameter was added after initialize.",
         "Before deepspeed.initialize count and read plain parameters (p.numel(), p.shape), or build the model inside "
         "deepspeed.zero.Init(config_dict_or_path=ds_config) if it must be partitioned from the start; code that runs "
         "either way can read getattr(p, \"ds_numel\", p.numel()). A restart fails the same way.", retry=False),
    NONLEAF_GRAD_NONE,
    # A gradient read through p.grad where it is None: `p.grad.norm()` -> "'NoneType' object has no attribute 'norm'"
    # under the source line that reads it. ZeRO-3 (and ZeRO-2 after its reduction) keeps gradients in its own
    # partitions and leaves every p.grad None; so do frozen and unused parameters, and any before backward or after
    # zero_grad(set_to_none=True).
    _sig("param-grad-none", r"\.grad\.(?P<m>\w{1,60})\b[^\n]{0,300}\n" + CARET_LINE + r"(?:[^\n]{0,300}\n" + CARET_LINE +
         r"){0,2}?(?P<ev>[^\n]{0,200}AttributeError: 'NoneType' object has no attribute '(?P=m)')",
         "The script read a parameter's gradient through p.grad and found None. Under DeepSpeed ZeRO (stage 3 always, "
         "stage 2 once the gradients are reduced) the gradients live in the engine's own partitions and p.grad "
         "stays None; elsewhere p.grad is None for a frozen parameter (requires_grad=False), one the forward "
         "did not use, before the first backward, or after optimizer.zero_grad(set_to_none=True).",
         "Under DeepSpeed read gradients with deepspeed.utils.safe_get_full_grad(p) on every rank, between "
         "engine.backward(loss) and engine.step() (or log engine.get_global_grad_norm()); elsewhere skip parameters "
         "whose p.grad is None and read the gradients after backward and before zero_grad. A restart fails the same "
         "way.", retry=False),
    # A ZeRO-3 parameter's ds_tensor (partition_parameters.py) is this rank's flat 1-D partition of it (numel / world
    # size, padded), not the weight: copying a whole [out, in] weight into it fails torch's broadcast check on the
    # source line that names ds_tensor.
    _sig("zero3-ds-tensor-partition", r"\.ds_tensor\b[^\n]{0,300}\n" + CARET_LINE + r"(?P<ev>[^\n]{0,200}(?:The size of tensor "
         r"a \(\d+\) must match the size of tensor b \(\d+\)|output with shape \[[\d, ]{0,60}\] doesn't match the "
         r"broadcast shape|shape mismatch|shape '\[[\d, -]{0,60}\]' is invalid for input of size))",
         "The script wrote a whole tensor into a ZeRO-3 parameter's ds_tensor: ds_tensor is only this rank's flat, "
         "1-D partition of the parameter (its numel divided by the number of ranks, padded), not the weight, so a "
         "[out, in] tensor does not fit it.",
         "Write whole weights to the parameter itself inside deepspeed.zero.GatheredParameters(p, modifier_rank=0) "
         "(every rank enters it; rank 0's values are kept), or load them into the model before deepspeed.initialize; "
         "deepspeed.utils.safe_set_full_fp32_param(p, value) sets the optimizer's fp32 copy after initialize. A "
         "restart fails the same way.", retry=False),
    # deepspeed.zero.Init wraps every module's __init__ (partition_parameters.py, `wrapper`) and partitions a module's
    # parameters as soon as its own __init__ returns: a parent that then initialises a child's weight (nn.init.eye_,
    # orthogonal_, xavier_*, kaiming_*, or indexes it) meets a 1-D empty placeholder. Only under that wrapper frame:
    # the same refusal of a bias or of a weight touched after deepspeed.initialize says nothing of zero.Init.
    _sig("zero3-init-child-partitioned", r"partition_parameters\.py\"?, line \d+, in wrapper\n(?:[^\n]{0,300}\n){0,40}?"
         r"(?P<ev>[^\n]{0,200}Error: (?:Only tensors with (?:2|2 or more|3, 4,? or 5) dimensions are supported|Fan in and fan "
         r"out can not be computed for tensor with fewer than 2 dimensions|too many indices for tensor of dimension 1))",
         "A module built inside deepspeed.zero.Init touched a submodule's parameter in its own __init__, after "
         "building that submodule (an nn.init call such as eye_, orthogonal_ or xavier_uniform_ on self.proj.weight, "
         "or an index into it): zero.Init partitions each module's parameters as soon as that module's __init__ "
         "returns, so the child's weight is already an empty 1-D placeholder there.",
         "Initialise each weight in the module that owns it (its own __init__ or reset_parameters), or wrap the "
         "parent's initialisation in deepspeed.zero.GatheredParameters(self.proj.weight, modifier_rank=0); or build "
         "the model outside zero.Init and let deepspeed.initialize partition it. A restart fails the same way.",
         retry=False),
    # zero.Init(config_dict_or_path=...) builds a DeepSpeedConfig (partition_parameters.py __init__ -> runtime/config.py
    # _batch_assertion) with the world size of the process group that exists then; before deepspeed.init_distributed()
    # (or torch's init_process_group) there is none, so a train_batch_size meant for N ranks fails against 1.
    _sig("zero3-init-before-dist", r"partition_parameters\.py\"?, line \d+, in __init__\n(?:[^\n]{0,300}\n){0,16}?"
         r"[^\n]{0,300}config\.py\"?, line \d+, in _batch_assertion\n(?:[^\n]{0,300}\n){0,4}?"
         r"(?P<ev>[^\n]{0,200}gradient_acc_step \* world_size ?\d+ ?!= ?\d+ ?\* ?\d+ ?\* ?1(?![\d.]))",
         "deepspeed.zero.Init(config_dict_or_path=...) ran before the process group existed (no "
         "deepspeed.init_distributed() before it): it builds its DeepSpeedConfig at once and checks the batch sizes "
         "against the world size it sees then, 1, so a train_batch_size meant for all the ranks does not fit.",
         "Call deepspeed.init_distributed() (or torch.distributed.init_process_group) before entering "
         "deepspeed.zero.Init; or leave train_batch_size out of the config and give train_micro_batch_size_per_gpu and "
         "gradient_accumulation_steps, which fit any world size. A restart fails the same way.", retry=False,
         aside_if=_dist_was_up),
)

# Read with the lines before a rank's error too (sigmessages.READS_BEFORE): DeepSpeed's warning is logged before the
# script's traceback, outside it.
ZERO3_READS_BEFORE: tuple[Signature, ...] = (NONLEAF_GRAD_NONE,)
