"""Round 192's rules (issue 45, live: DeepSpeed ZeRO-3's partitioned parameters touched by the user's own code): a ds_*
attribute read on a parameter ZeRO-3 never converted (zero3-ds-attr-unconverted), a gradient read from p.grad
(param-grad-none), a whole weight written into a rank's flat ds_tensor (zero3-ds-tensor-partition), a parent's
__init__ initialising a child already partitioned by zero.Init (zero3-init-child-partitioned) and zero.Init's config
built before the process group (zero3-init-before-dist). Second wordings and near misses that must stay off them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("zero3-ds-attr-unconverted", "param-grad-none", "zero3-ds-tensor-partition", "zero3-init-child-partitioned",
       "zero3-init-before-dist")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_WRAPPER = ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/partition_parameters.py", line 511, in '
            "wrapper\n    f(module, *args, **kwargs)\n")


@pytest.mark.parametrize("text, name", [
    # a shape read for logging, Python 3.10 (no caret line), a rank prefix
    ('[rank1]:   File "/home/u/train.py", line 52, in log_shapes\n'
     '[rank1]:     print(name, p.ds_shape)\n'
     "[rank1]: AttributeError: 'Parameter' object has no attribute 'ds_shape'\n", "zero3-ds-attr-unconverted"),
    # a gradient clipped by hand after engine.backward: the norm of p.grad
    (_TB + '  File "train.py", line 61, in main\n'
     "    total += p.grad.data.norm(2).item() ** 2\n"
     "AttributeError: 'NoneType' object has no attribute 'data'\n", "param-grad-none"),
    # ds_tensor's partition given a reshaped view of the full weight: torch's view check
    (_TB + '  File "train.py", line 30, in load\n'
     "    p.ds_tensor.data.copy_(w.view(p.ds_tensor.shape[0], -1))\n"
     "RuntimeError: shape '[4096, -1]' is invalid for input of size 0\n", "zero3-ds-tensor-partition"),
    # orthogonal_ on a child under zero.Init, torch's other wording
    (_TB + _WRAPPER + '  File "model.py", line 20, in __init__\n    nn.init.orthogonal_(self.rnn_proj.weight)\n'
     '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/init.py", line 543, in orthogonal_\n'
     '    raise ValueError("Only tensors with 2 or more dimensions are supported")\n'
     "ValueError: Only tensors with 2 or more dimensions are supported\n", "zero3-init-child-partitioned"),
    # a slice of the child's weight zeroed in the parent's __init__
    (_TB + _WRAPPER + '  File "model.py", line 24, in __init__\n    self.out.weight.data[:, :8] = 0\n'
     "IndexError: too many indices for tensor of dimension 1\n", "zero3-init-child-partitioned"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # DeepSpeed's own coordinator meeting a parameter added after initialize: zero3-param-not-registered's
    ('  File "/opt/venv/lib/python3.10/site-packages/deepspeed/runtime/zero/partitioned_param_coordinator.py", line '
     "276, in fetch_sub_module\n"
     "    if param.ds_status == ZeroParamStatus.NOT_AVAILABLE:\n"
     "AttributeError: 'Parameter' object has no attribute 'ds_status'\n", "zero3-ds-attr-unconverted"),
    # a None that is not a gradient: an optional module left None
    (_TB + '  File "train.py", line 12, in forward\n    x = self.norm.forward(x)\n'
     "AttributeError: 'NoneType' object has no attribute 'forward'\n", "param-grad-none"),
    # the same broadcast refusal on a plain tensor's copy, no ds_tensor
    (_TB + '  File "train.py", line 18, in <module>\n    w.copy_(pretrained)\n'
     "RuntimeError: The size of tensor a (256) must match the size of tensor b (16) at non-singleton dimension 1\n",
     "zero3-ds-tensor-partition"),
    # xavier on a bias after deepspeed.initialize: no zero.Init wrapper frame
    (_TB + '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/init.py", line 345, in _calculate_fan_in_and_fan_out\n'
     '    raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")\n'
     "ValueError: Fan in and fan out can not be computed for tensor with fewer than 2 dimensions\n",
     "zero3-init-child-partitioned"),
    # the batch check against a world of one from deepspeed.initialize itself (one process launched)
    (_TB + '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/config.py", line 602, in _batch_assertion\n'
     "    assert train_batch == micro_batch * grad_acc * self.world_size, (\n"
     "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
     "gradient_acc_step * world_size 16 != 2 * 8 * 1\n", "zero3-init-before-dist"),
])
def test_near_misses(text, name):
    assert sig(text) != name


def test_zero_init_with_the_process_group_up_stays_the_early_count():
    # DeepSpeed 0.9.x's zero.Init inside from_pretrained counted a world of one after init_distributed had run
    text = ("[INFO] [comm.py:622:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl\n" + _TB +
            '  File "/opt/venv/lib/python3.10/site-packages/deepspeed/runtime/zero/partition_parameters.py", line 685, '
            "in __init__\n    _ds_config = deepspeed.runtime.config.DeepSpeedConfig(config_dict_or_path, mpu)\n"
            '  File "/opt/venv/lib/python3.10/site-packages/deepspeed/runtime/config.py", line 883, in _batch_assertion\n'
            "    assert train_batch == micro_batch * grad_acc * self.world_size, (\n"
            "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
            "gradient_acc_step * world_size 128 != 4 * 4 * 1\n")
    assert sig(text) == "ds-world-size-one"
