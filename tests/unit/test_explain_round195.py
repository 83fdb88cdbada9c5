"""Round 195's rules (issue 45, live: activation checkpointing and memory-saving features in distributed training):
torch.utils.checkpoint's reentrant variant given keyword arguments (checkpoint-reentrant-kwargs), checkpoint_sequential
given a module that is not a sequence of layers (checkpoint-sequential-not-sequential), torch's checkpoint options
handed to DeepSpeed's checkpoint, which passes them on to forward (ds-checkpoint-kwarg-to-forward), DeepSpeed's
contiguous memory checkpointing without number_checkpoints (ds-contiguous-ckpt-no-layers) and partial optimizer
offload outside ZeRO-3 (ds-offload-ratio-stage). The cases' own logs, second wordings and near misses that must stay
off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("checkpoint-reentrant-kwargs", "checkpoint-sequential-not-sequential", "ds-checkpoint-kwarg-to-forward",
       "ds-contiguous-ckpt-no-layers", "ds-offload-ratio-stage")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-actckpt-reentrant-kwargs", "checkpoint-reentrant-kwargs"),
    ("live-actckpt-sequential-plain-module", "checkpoint-sequential-not-sequential"),
    ("live-actckpt-ds-use-reentrant-kwarg", "ds-checkpoint-kwarg-to-forward"),
    ("live-actckpt-ds-contiguous-no-num-checkpoints", "ds-contiguous-ckpt-no-layers"),
    ("live-actckpt-zero2-offload-ratio", "ds-offload-ratio-stage"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_TORCH = "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py"
_DS = "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/activation_checkpointing/checkpointing.py"


@pytest.mark.parametrize("text, name", [
    # torch 2.1 (no dynamo frames, Python 3.10: no caret lines), two keywords
    (_TB + f'  File "{_TORCH}", line 451, in checkpoint\n    raise ValueError(\n'
     "ValueError: Unexpected keyword arguments: attention_mask,position_ids\n", "checkpoint-reentrant-kwargs"),
    # a ModuleDict given to checkpoint_sequential, ranks' prefixes
    ("[rank1]: " + _TB.replace("\n", "\n[rank1]: ", 3) + f'[rank1]:   File "{_TORCH}", line 580, in '
     "checkpoint_sequential\n[rank1]:     segment_size = len(functions) // segments\n"
     "[rank1]: TypeError: object of type 'Encoder' has no len()\n", "checkpoint-sequential-not-sequential"),
    # preserve_rng_state reaching a plain function's signature
    (_TB + f'  File "{_DS}", line 1063, in function_with_kwargs\n'
     "    return run_function(*positional_args, **keyword_args)\n"
     "TypeError: custom_forward() got an unexpected keyword argument 'preserve_rng_state'\n",
     "ds-checkpoint-kwarg-to-forward"),
    (_TB + "AssertionError: Must specify the number of layers with contiguous memory checkpointing\n",
     "ds-contiguous-ckpt-no-layers"),
    ("[rank0]: pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroConfig\n"
     "[rank0]:   Assertion failed, Partial offloading only supported for ZeRO Stage 3. [type=assertion_error]\n",
     "ds-offload-ratio-stage"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # checkpoint_sequential refusing a keyword argument: its own words, not a reentrant checkpoint's
    (_TB + f'  File "{_TORCH}", line 605, in checkpoint_sequential\n    raise ValueError(\n'
     "ValueError: Unexpected keyword arguments: attn_mask\n", "checkpoint-reentrant-kwargs"),
    # another library's "Unexpected keyword arguments", no checkpoint frame
    (_TB + "ValueError: Unexpected keyword arguments: foo\n", "checkpoint-reentrant-kwargs"),
    # a DataLoader's sampler taking len() of a dataset: not checkpoint_sequential's
    (_TB + '  File "/usr/lib/python3/dist-packages/torch/utils/data/sampler.py", line 118, in __len__\n'
     "    return len(self.data_source)\nTypeError: object of type 'Stream' has no len()\n",
     "checkpoint-sequential-not-sequential"),
    # the user's own keyword (a mask) under DeepSpeed's checkpoint: the forward's bug, not torch's option
    (_TB + f'  File "{_DS}", line 1063, in function_with_kwargs\n'
     "    return run_function(*positional_args, **keyword_args)\n"
     "TypeError: Block.forward() got an unexpected keyword argument 'attn_mask'\n",
     "ds-checkpoint-kwarg-to-forward"),
    # use_reentrant given to a transformers model's forward (no DeepSpeed frame)
    (_TB + "TypeError: LlamaModel.forward() got an unexpected keyword argument 'use_reentrant'\n",
     "ds-checkpoint-kwarg-to-forward"),
    # contiguous checkpointing without partitioning: the other refusal of configure()
    (_TB + "AssertionError: Contiguous Checkpointing is only available with partitioned activations. Set partitioned "
     "activations to true in deepspeed config\n", "ds-contiguous-ckpt-no-layers"),
    # NVMe offload without a path: another offload refusal
    (_TB + "pydantic_core._pydantic_core.ValidationError: 1 validation error for DeepSpeedZeroOffloadOptimizerConfig\n"
     '  Value error, "nvme_path" in DeepSpeed Config cannot be None if remote device is nvme\n',
     "ds-offload-ratio-stage"),
])
def test_near_misses(text, name):
    assert sig(text) != name
