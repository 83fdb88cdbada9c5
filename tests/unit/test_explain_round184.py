"""Round 184's rules (issue 45, live: freezing layers and partial training under DDP and DeepSpeed): DDP's reducer
"Expected to mark a variable ready only once" with no reentrant backward in the rank's traceback, a parameter used
outside forward under find_unused_parameters=True (ddp-param-outside-forward, siggloo.py); ZeRO-1/2's optimizer given a
param group with no trainable parameter (stage_1_and_2.py __init__: `param_dtype = self.bit16_groups[i][0].dtype`
IndexError, earlier releases' flatten of the empty group: zero-group-no-trainable-params) and its checkpoint loader's
"parameter-alignment layout does not match" after the set of trainable parameters changed
(zero-ckpt-trainable-set-changed), in sigdssource.py; second wordings and near misses."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ddp-param-outside-forward", "zero-group-no-trainable-params", "zero-ckpt-trainable-set-changed")


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW + ("zero3-defragment-mixed-dtype",))
    assert "none at all" in by_name["zero3-defragment-mixed-dtype"].cause


_MARK_TWICE = ("RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the "
               "following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model "
               "parameters are not shared across multiple concurrent forward-backward passes. or try to use "
               "_set_static_graph() as a workaround if this module graph does not change during training loop.2) Reused "
               "parameters in multiple reentrant backward passes.\n")


@pytest.mark.parametrize("text", [
    # torch 1.x, no rank prefix, the older engine call (Variable._execution_engine.run_backward in __init__.py)
    ("Traceback (most recent call last):\n"
     '  File "train_clip.py", line 120, in train_one_epoch\n'
     "    total_loss.backward()\n"
     '  File "/usr/local/lib/python3.8/site-packages/torch/_tensor.py", line 363, in backward\n'
     "    torch.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)\n"
     '  File "/usr/local/lib/python3.8/site-packages/torch/autograd/__init__.py", line 173, in backward\n'
     "    Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
     + _MARK_TWICE),
    # accelerate's backward (accelerator.backward) in the traceback, torch 2.x with its rank prefix
    ("[rank1]: Traceback (most recent call last):\n"
     '[rank1]:   File "/work/train.py", line 77, in <module>\n'
     "[rank1]:     accelerator.backward(loss)\n"
     '[rank1]:   File "/opt/venv/lib/python3.10/site-packages/accelerate/accelerator.py", line 2196, in backward\n'
     "[rank1]:     loss.backward(**kwargs)\n"
     '[rank1]:   File "/opt/venv/lib/python3.10/site-packages/torch/autograd/graph.py", line 768, in '
     "_engine_run_backward\n"
     "[rank1]:     return Variable._execution_engine.run_backward(\n[rank1]: " + _MARK_TWICE),
])
def test_parameter_used_outside_forward(text):
    assert sig(text) == "ddp-param-outside-forward"


@pytest.mark.parametrize("text", [
    # reentrant checkpointing's own backward in the traceback (torch.utils.checkpoint's CheckpointFunction)
    ("[rank0]: Traceback (most recent call last):\n"
     '[rank0]:   File "/work/train.py", line 40, in <module>\n'
     "[rank0]:     loss.backward()\n"
     '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/autograd/function.py", line 325, in apply\n'
     "[rank0]:     return user_fn(self, *args)\n"
     '[rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/utils/checkpoint.py", line 331, in backward\n'
     "[rank0]:     torch.autograd.backward(outputs_with_grad, args_with_grad)\n[rank0]: " + _MARK_TWICE),
    # the message alone, no traceback: which backward is not known
    _MARK_TWICE,
    # DDP's other reducer error (a parameter with no gradient)
    ("Traceback (most recent call last):\n"
     '  File "train.py", line 35, in <module>\n'
     "    loss = model(x).sum()\n"
     "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.\n"),
])
def test_near_misses_are_not_parameter_outside_forward(text):
    assert sig(text) != "ddp-param-outside-forward"


@pytest.mark.parametrize("text", [
    # DeepSpeed 0.9-0.14: the empty group is flattened (ssbuild/moss_finetuning#22's traceback, plain format)
    ('  File "/usr/lib/python3.8/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 313, in __init__\n'
     "    self.flatten_dense_tensors_aligned(\n"
     '  File "/usr/lib/python3.8/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 830, in '
     "flatten_dense_tensors_aligned\n"
     "    return self.flatten(align_dense_tensors(tensor_list, alignment))\n"
     '  File "/usr/lib/python3.8/site-packages/torch/_utils.py", line 459, in _flatten_dense_tensors\n'
     "    return torch._C._nn.flatten_dense_tensors(tensors)\n"
     "RuntimeError: torch.cat(): expected a non-empty list of Tensors\n"),
    # 0.19 without the caret line (Python 3.10)
    ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 440, in __init__\n'
     "    param_dtype = self.bit16_groups[i][0].dtype\n"
     "IndexError: list index out of range\n"),
])
def test_zero_group_without_trainable_params(text):
    assert sig(text) == "zero-group-no-trainable-params"


@pytest.mark.parametrize("text", [
    # ZeRO-3's optimizer on a step with an empty param group (deepspeedai/DeepSpeed#6857): another cause
    ('  File "/share/home/x/envs/qwen2_vl/lib/python3.10/site-packages/deepspeed/runtime/zero/stage3.py", line 980, in '
     "_optimizer_step\n"
     "    self.optimizer.param_groups[param_group_id]['params'] = []\n"
     "IndexError: list index out of range\n"),
    # a user's own torch.cat of an empty list
    ('  File "/work/collate.py", line 12, in collate\n'
     "    return torch.cat(chunks)\n"
     "RuntimeError: torch.cat(): expected a non-empty list of Tensors\n"),
])
def test_near_misses_are_not_zero_group_without_trainable_params(text):
    assert sig(text) != "zero-group-no-trainable-params"


def test_zero_checkpoint_layout_changed():
    text = ("RuntimeError: The ZeRO checkpoint parameter-alignment layout does not match the current "
            "zero_optimization.parameter_alignment setting.\n")
    assert sig(text) == "zero-ckpt-trainable-set-changed"


@pytest.mark.parametrize("text", [
    # the ZeRO checkpoint of another world size (DeepSpeed's elastic check)
    "AssertionError: The checkpoint being loaded used a DP world size of 8 but the current world size is 4.\n",
    # torch's optimizer load with another number of parameters
    "ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group\n",
])
def test_near_misses_are_not_zero_checkpoint_layout_changed(text):
    assert sig(text) != "zero-ckpt-trainable-set-changed"
