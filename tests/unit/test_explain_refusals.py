"""A rank's own error that no signature knows, read for the kind of refusal its message states (refusals.py): each kind
from two wordings of different libraries, its near misses, and its place after every signature."""

from __future__ import annotations

import pytest

from dscluster import explain, refusals

SITE = "/usr/local/lib/python3.10/dist-packages"


def raised(line: str, lib: str | None = None) -> str:
    frames = '  File "/work/train.py", line 12, in <module>\n    main()\n'
    if lib:
        frames += f'  File "{SITE}/{lib}/core.py", line 310, in check\n    raise err\n'
    return f"Traceback (most recent call last):\n{frames}{line}\n"


@pytest.mark.parametrize("line,kind", [
    ("TypeError: Engine.__init__() got an unexpected keyword argument 'shard_mode'", "refused-call"),
    ("TypeError: load() missing 1 required positional argument: 'path'", "refused-call"),
    ("TypeError: step() takes 2 positional arguments but 3 were given", "refused-call"),
    ("RuntimeError: sparse tensors are not supported by this operation yet", "refused-unsupported"),
    ("ValueError: This tokenizer only supports left padding", "refused-unsupported"),
    ("ValueError: This optimizer does not support sparse gradients", "refused-unsupported"),
    ("RuntimeError: the installed sentencepiece is too old for this tokenizer.json", "refused-unsupported"),
    ("ValueError: `load_in_8bit` and `load_in_4bit` are mutually exclusive", "refused-combination"),
    ("ValueError: You passed both a tokenizer and a processing_class", "refused-combination"),
    ("ValueError: gradient checkpointing is not compatible with the cache", "refused-combination"),
    ("RuntimeError: Unable to find the vocabulary file in the snapshot directory", "refused-missing"),
    ("ValueError: Unknown quantization type, got fp5 - supported types are: ['awq', 'gptq']", "refused-value"),
    ("ValueError: `padding_side` must be one of ['left', 'right']", "refused-value"),
    ("KeyError: 'unrecognized scheduler: cosine_warm'", "refused-value"),
    ("RuntimeError: tensor parallel group size 8 cannot be larger than the number of heads 4", "refused-requirement"),
    ("ImportError: wandb is not installed, please install it with pip install wandb", "refused-missing"),
    ("ValueError: this quantization method requires the whole model on one device", "refused-requirement"),
    ("ValueError: You cannot train a model loaded in 8-bit without adapters", "refused-requirement"),
    ("AssertionError: hidden size must be divisible by the number of attention heads", "refused-requirement"),
])
def test_each_kind_of_refusal_is_named_with_its_words(line, kind):
    exp = explain.explain(raised(line))
    assert exp.signature == kind and exp.retry is False, (line, exp.signature)
    d = exp.to_dict()
    assert line.split(": ", 1)[1][:60] in d["cause"] and d["cause"].startswith(("The program", "A call")), d["cause"]


def test_the_library_that_refused_is_named_with_its_frame():
    d = explain.explain(raised("ValueError: fp8 is not supported on this device", lib="accelerate")).to_dict()
    assert d["signature"] == "refused-unsupported"
    assert d["cause"].startswith("accelerate (accelerate/core.py:310) does not support what the run asks of it")


@pytest.mark.parametrize("line", [
    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1691, invalid usage, NCCL version 2.18.1",  # a lower layer's
    "RuntimeError: CUDA error: operation not supported\nCUDA kernel errors might be asynchronously reported",
    "OSError: [Errno 95] Operation not supported: '/mnt/nfs/ckpt/lock'",  # an OS error: errorline reads those
    "RuntimeError: the data loader returned an empty batch",  # no words of a refusal
    "RuntimeError: CUDA error: unknown error",  # a lower layer's, and no value named
    "TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'",  # a bug in the script, not a refusal
    "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",  # nor this
    "RuntimeError: connecting to the shard server timed out after 30 s",  # of a kind that passes: a restart may help
])
def test_near_misses_are_no_refusal(line):
    exp = explain.explain(raised(line))
    assert exp is None or exp.signature not in refusals.NAMES, (line, exp.signature)


def test_a_signature_that_knows_the_words_comes_first():
    # bf16 on a GPU without it: the family precision-unsupported, not the kind of refusal.
    line = "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0"
    assert explain.explain(raised(line)).signature == "precision-unsupported"


def test_a_refusal_is_generic_for_the_supervisor_and_quoted_safely():
    assert refusals.NAMES <= explain.GENERIC
    exp = explain.explain(raised("ValueError: mode \x1b[2J is not supported " + "x" * 1000))
    d = exp.to_dict()
    assert "\x1b" not in d["cause"] and "\\x1b[2J" in d["cause"] and len(d["cause"]) < 700
