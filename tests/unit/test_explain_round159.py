"""Round 159's rules (issue 45, live round: mistakes users make with the DeepSpeed engine and its config, run for real
on this release's torch 2.13 and DeepSpeed 0.19.8): ds-ckpt-no-latest reads DeepSpeed's load_checkpoint warning that
the directory has no `latest` file (engine.py load_checkpoint, which then returns (None, None)) before the script's
error on that None; ds-loss-backward also reads DeepSpeed 0.18+'s own refusal of a tensor.backward() the training loop
ran itself (engine.py _backward_prologue and its unscaled-loss check). Second wordings (other callers' and versions'
words than the live case's) and near misses, other components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-ckpt-no-latest",)

_WARN = ("[WARNING] [engine.py:2712:load_checkpoint] Unable to find latest file at /scratch/ckpts/gpt/latest, if "
         "trying to load latest checkpoint please ensure this file exists or pass an explicit checkpoint tag when "
         "loading a checkpoint.\n")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # an older engine (0.9's line number), the client state read with .get, no rank prefix
    (_WARN + "Traceback (most recent call last):\n"
     '  File "/home/me/pretrain.py", line 201, in main\n'
     '    step = client_state.get("step", 0)\n'
     "AttributeError: 'NoneType' object has no attribute 'get'\n"),
    # torchrun's rank prefixes, the client state tested with `in`
    ("[rank1]:" + _WARN + "[rank1]: Traceback (most recent call last):\n"
     '[rank1]:   File "/workspace/train.py", line 77, in <module>\n'
     '[rank1]:     if "epoch" in client_sd:\n'
     "[rank1]: TypeError: argument of type 'NoneType' is not iterable\n"),
])
def test_load_checkpoint_without_latest(text):
    assert sig(text) == "ds-ckpt-no-latest"


@pytest.mark.parametrize("text", [
    # zero_to_fp32.py's own words for a directory without `latest` (zero-ckpt-dir, not the engine's load_checkpoint)
    ('  File "zero_to_fp32.py", line 505, in get_fp32_state_dict_from_zero_checkpoint\n'
     "    raise ValueError(f\"Unable to find 'latest' file at {latest_path}\")\n"
     "ValueError: Unable to find 'latest' file at ./checkpoint-500/latest\n"),
    # the warning, then a run that fails later for another reason (a fresh start is what the script meant)
    (_WARN + "Traceback (most recent call last):\n"
     '  File "/home/me/pretrain.py", line 230, in main\n'
     "    batch = next(it)\n"
     "StopIteration\n"),
    # a None subscripted with no DeepSpeed warning before it (the script's own None)
    ("Traceback (most recent call last):\n"
     '  File "/home/me/pretrain.py", line 88, in main\n'
     '    lr = cfg["optim"]["lr"]\n'
     "TypeError: 'NoneType' object is not subscriptable\n"),
])
def test_near_misses_are_not_ds_ckpt_no_latest(text):
    assert sig(text) != "ds-ckpt-no-latest"


@pytest.mark.parametrize("text", [
    # the unscaled-loss check after a direct backward (fp16, ZeRO's loss scaler), raised from the engine's hook
    ('[rank0]:   File "/opt/venv/lib/python3.12/site-packages/deepspeed/runtime/engine.py", line 3210, in '
     "_backward_epilogue\n"
     "[rank0]:     raise RuntimeError(error_msg)\n"
     "[rank0]: RuntimeError: Loss scaling is required for this configuration, but backward() was called directly "
     "without scaling the loss. Please use one of the following: 1. engine.backward(loss) 2. "
     "engine.scale(loss).backward()\n"),
    # the refusal quoted in an issue's title, no traceback frame
    ("RuntimeError: Direct calls to tensor.backward() are not supported in this configuration. This occurs when "
     "either: (1) your PyTorch version lacks required internal APIs, or (2) using ZeRO stage 0. Please use "
     "engine.backward(loss) instead.\n"),
])
def test_direct_backward_refused(text):
    assert sig(text) == "ds-loss-backward"


@pytest.mark.parametrize("text", [
    # torch's own refusal of a second backward through a freed graph (not DeepSpeed's)
    ("RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they "
     "have already been freed).\n"),
    # torch.autograd's functorch refusal of a backward inside a transform
    ("RuntimeError: backward() called inside a functorch transform. This is not supported, please use "
     "functorch.grad or functorch.vjp instead or call backward() outside of functorch transforms.\n"),
])
def test_near_misses_are_not_ds_loss_backward(text):
    assert sig(text) != "ds-loss-backward"
