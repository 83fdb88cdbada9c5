"""Round 21's rules (issue 45), DeepSpeed itself and PyTorch core under distributed training (sigparallel.py): MoE's
expert-parallel size over the ranks (ds-moe-ep-size), AutoTP's dimensions not divisible by the tensor-parallel size
(ds-tp-divisible), a pipeline group larger than its stages (pipeline-stages), a DeepSpeed CUDA op on another accelerator
(ds-op-no-cpu), an op built only for newer GPUs (mii-compute-capability), GPU UUIDs in CUDA_VISIBLE_DEVICES read as
indices (ds-visible-devices), DDP of a module with nothing to train (ddp-no-trainable-params), anomaly mode's NaN
(autograd-nan); and a pasted traceback cut above its `Traceback` line keeping its frames (rankerror.py). A second
wording of each, in another version's or another caller's words than the corpus case it was written from, and near
misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

NEW = ("ds-moe-ep-size", "ds-tp-divisible", "pipeline-stages", "ds-op-no-cpu", "mii-compute-capability",
       "ds-visible-devices", "ddp-no-trainable-params", "autograd-nan")


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed with a Megatron mpu (the expert+model groups), under torchrun's prefix (the case: the expert+data groups)
    ("[rank3]: Traceback (most recent call last):\n"
     "[rank3]:   File \"/opt/conda/lib/python3.11/site-packages/deepspeed/utils/groups.py\", line 251, in "
     "_create_expert_data_and_model_parallel\n"
     "[rank3]:     _ensure_divisibility(world_size, expert_parallel_size_)\n"
     "[rank3]:   File \"/opt/conda/lib/python3.11/site-packages/deepspeed/utils/groups.py\", line 60, in "
     "_ensure_divisibility\n"
     "[rank3]:     assert numerator % denominator == 0, '{} is not divisible by {}'.format(numerator, denominator)\n"
     "[rank3]: AssertionError: 6 is not divisible by 4\n", "ds-moe-ep-size"),
    # the injection policies' wording (replace_module.py) for GPT-2's 25 heads on 2 GPUs
    ("AssertionError: n_heads (25) must be divisible by mp_size (2)\n", "ds-tp-divisible"),
    # tp_shard.py's wording
    ("AssertionError: Number of attention heads (28) must be divisible by mp_size (8)\n", "ds-tp-divisible"),
    # torch's pipelining from torchtitan, 4 ranks on 2 stages
    ("[rank2]: RuntimeError: Pipeline group size 4 cannot be larger than number of stages 2\n", "pipeline-stages"),
    # an Ascend NPU's DeepSpeed accelerator (op_builder/npu/no_impl.py)
    ("  File \"/usr/local/lib/python3.9/site-packages/deepspeed/ops/op_builder/npu/no_impl.py\", line 21, in load\n"
     "    raise ValueError(\"This op had not been implemented on NPU backend.\")\n"
     "ValueError: This op had not been implemented on NPU backend.\n", "ds-op-no-cpu"),
    # FastGen's other op on a V100
    ("RuntimeError: Unable to load ragged_device_ops op due to no compute capabilities remaining after filtering\n",
     "mii-compute-capability"),
    # a GPU UUID (not a MIG slice) from PBS, under the launcher's traceback
    ("  File \"/opt/venv/lib/python3.10/site-packages/deepspeed/launcher/runner.py\", line 295, in <listcomp>\n"
     "    slots = [int(x) for x in slots.split(SLOT_SEP)]\n"
     "ValueError: invalid literal for int() with base 10: 'GPU-1c2b3a4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d'\n",
     "ds-visible-devices"),
    # torch 1.x raised it as an AssertionError
    ("AssertionError: DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
     "gradient.\n", "ddp-no-trainable-params"),
    # today's ordinal wording ("0th"; the case was an older release's "1st")
    ("RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.\n", "autograd-nan"),
])
def test_a_second_wording_of_each_rule(text, expected):
    found = explain.explain(text)
    assert found is not None and found.signature == expected and found.retry is False


@pytest.mark.parametrize("text,not_expected", [
    # Megatron's own divisibility check (a padded vocabulary), no expert-parallel frame or group
    ("  File \"/w/megatron/core/utils.py\", line 24, in ensure_divisibility\n"
     "    assert numerator % denominator == 0, \"{} is not divisible by {}\".format(numerator, denominator)\n"
     "AssertionError: 50257 is not divisible by 3\n", "ds-moe-ep-size"),
    # the expert groups' frame long before an unrelated assertion (a traceback of its own, many lines on)
    ("  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/utils/groups.py\", line 133, in "
     "_create_expert_and_data_parallel\n" + "step 10 loss 2.1\n" * 20 + "AssertionError: 3 is not divisible by 2\n",
     "ds-moe-ep-size"),
    # vLLM's own words for the same kind of layout: not DeepSpeed's tensor parallelism
    ("ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).\n",
     "ds-tp-divisible"),
    # Megatron's pipeline check is about layers, not ranks over stages
    ("AssertionError: num_layers should be divisible by pipeline_model_parallel_size\n", "pipeline-stages"),
    # DeepSpeed's own test suite skipping an op: no op was loaded
    ("SKIPPED [1] tests/unit/ops/adam/test_cpu_adam.py:18: This op had not been implemented on this system.\n",
     "ds-op-no-cpu"),
    # the builder's warning alone: another architecture was left to build for
    (" [WARNING]  Filtered compute capabilities ['7.0+PTX']\nLoading extension module inference_core_ops...\n",
     "mii-compute-capability"),
    # a number that is no GPU UUID
    ("ValueError: invalid literal for int() with base 10: 'auto'\n", "ds-visible-devices"),
    # autograd's shape check, not a NaN
    ("RuntimeError: Function 'MulBackward0' returned an invalid gradient at index 0 - got [2] but expected shape "
     "compatible with [3]\n", "autograd-nan"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_launchers_gap_stays_ds_include_and_names_cuda_visible_devices():
    found = explain.explain("ValueError: No slot '2' specified on host 'localhost'\n")
    assert found.signature == "ds-include" and "CUDA_VISIBLE_DEVICES" in found.cause + found.fix
    assert sig("ValueError: Hostname 'node9' not found in hostfile\n") == "ds-include"


def test_a_pasted_traceback_without_its_header_keeps_its_frames():
    # transformers' auto mapping without the model type (the frame names it), pasted from `  File` on
    text = ("  File \"/usr/lib/python3/site-packages/transformers/models/auto/configuration_auto.py\", line 671, in "
            "__getitem__\n    raise KeyError(key)\nKeyError: 'gemma2'\n")
    assert sig(text) == "package-too-old"
    # indented lines that are no frames (a printed config) do not join the error's block
    assert sig("  zero_optimization:\n    stage: 3\nKeyError: 'gemma2'\n") != "package-too-old"


def test_the_new_texts_are_translated_and_mpi_host_slots_is_still_read():
    zh = FAILURES_ZH
    for name in (*NEW, "ds-include"):
        s = next(s for s in explain.SIGNATURES if s.name == name)
        assert s.cause in zh and s.fix in zh and s.retry is False, name
    # round 20's rule, now the Open MPI backend's own signature, still before ssh-unreachable
    assert sig("ssh: Could not resolve hostname localhost:4: Name or service not known\n") == "mpi-host-slots"
    assert sig("ssh: Could not resolve hostname node0: Name or service not known\n") == "ssh-unreachable"
