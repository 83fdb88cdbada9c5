"""Round 52's rules (issue 45), from model-parallel layouts and their configuration errors (sigparallel.py,
sigframeworks.py): Megatron's layers over its pipeline stages, its distributed optimizer's instances over the (expert)
data-parallel ranks, a checkpoint saved under another tensor- or pipeline-parallel size, and the tensor-parallel
helpers' bare 'N is not divisible by M' read by the frame that raised it: a second wording of each, in another version's
or another caller's words than the corpus case it was written from, and near misses that must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigframeworks import FRAMEWORK_SIGNATURES
from dscluster.sigparallel import PARALLEL_SIGNATURES

NEW = ("megatron-pp-layers", "megatron-distopt-instances", "megatron-ckpt-parallel-mismatch")


@pytest.mark.parametrize("text,expected", [
    # Megatron core's newer get_num_layers_to_build prints the numbers (Megatron-Bridge's recipes hit it; the case was
    # the older wording)
    ("AssertionError: num_layers=60 should be divisible by config.pipeline_model_parallel_size=8\n",
     "megatron-pp-layers"),
    # megatron/training/arguments.py (validate_args), raised by Megatron itself under ms-swift's `megatron sft`
    ("  File \"/workspace/Megatron-LM/megatron/training/arguments.py\", line 561, in validate_args\n"
     "    raise AssertionError('Number of layers should be divisible by the pipeline-model-parallel size')\n"
     "[rank14]: AssertionError: Number of layers should be divisible by the pipeline-model-parallel size\n",
     "megatron-pp-layers"),
    # the legacy megatron/model/transformer.py
    ("AssertionError: num_layers must be divisible by transformer_pipeline_model_parallel_size\n",
     "megatron-pp-layers"),
    # the dense data-parallel groups (the case was the MoE layers' expert data-parallel groups), as a fork raises it
    ("  File \"/opt/megatron-lm/megatron/core/parallel_state.py\", line 902, in initialize_model_parallel\n"
     "    raise RuntimeError(\nRuntimeError: Data parallel size should be divisible by partial DistOpt shard factor\n",
     "megatron-distopt-instances"),
    # Megatron-DeepSpeed, the pipeline size (the case was Megatron-LM's tensor size)
    ("AssertionError: pipeline_model_parallel_size value from checkpoint (4) is not equal to the input argument value "
     "(2).\n", "megatron-ckpt-parallel-mismatch"),
    # GPT-NeoX's check_checkpoint_args, its own argument name and words
    ("AssertionError: pipe_parallel_size value from checkpoint (2) is not equal to the currently set argument value "
     "(1).\n", "megatron-ckpt-parallel-mismatch"),
    # an older Megatron, one model-parallel size, its message's two literals joined without a space
    ("AssertionError: model_parallel_size value from checkpoint (2) is not equal to the input argumentvalue (1).\n",
     "megatron-ckpt-parallel-mismatch"),
    # Megatron core's attention splitting its heads (divide -> ensure_divisibility; the cases were ColossalAI's and
    # SGLang's helpers)
    ("  File \"/usr/local/lib/python3.10/dist-packages/megatron/core/transformer/attention.py\", line 104, in __init__\n"
     "    self.num_attention_heads_per_partition = divide(self.config.num_attention_heads, world_size)\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/megatron/core/utils.py\", line 68, in divide\n"
     "    ensure_divisibility(numerator, denominator)\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/megatron/core/utils.py\", line 62, in ensure_divisibility\n"
     "    assert numerator % denominator == 0, \"{} is not divisible by {}\".format(numerator, denominator)\n"
     "AssertionError: 25 is not divisible by 2\n", "tp-size-indivisible"),
    # fairscale's model-parallel layers (Llama's first release) splitting the vocabulary
    ("  File \"/opt/conda/lib/python3.10/site-packages/fairscale/nn/model_parallel/utils.py\", line 36, in "
     "divide_and_check_no_remainder\n    ensure_divisibility(numerator, denominator)\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/fairscale/nn/model_parallel/utils.py\", line 30, in "
     "ensure_divisibility\n    assert numerator % denominator == 0, \"{} is not divisible by {}\".format(numerator, "
     "denominator)\nAssertionError: 32000 is not divisible by 3\n", "tp-size-indivisible"),
    # vLLM's workers, every line prefixed, a newer copy raising ValueError
    ("(VllmWorker rank=1 pid=105) ERROR 09-09 02:24:28 [multiproc_executor.py:522]   File \"/usr/local/lib/python3.12/"
     "dist-packages/vllm/distributed/utils.py\", line 21, in ensure_divisibility\n"
     "(VllmWorker rank=1 pid=105) ERROR 09-09 02:24:28 [multiproc_executor.py:522]     raise ValueError(f\"{numerator} "
     "is not divisible by {denominator}\")\n"
     "(VllmWorker rank=1 pid=105) ERROR 09-09 02:24:28 [multiproc_executor.py:522] ValueError: 12 is not divisible by "
     "8\n", "tp-size-indivisible"),
    # the old Megatron mpu checking the world size with the same helper: the world size, not a layer
    ("  File \"/workspace/Megatron-LM/megatron/mpu/initialize.py\", line 87, in initialize_model_parallel\n"
     "    ensure_divisibility(world_size, tensor_model_parallel_size * pipeline_model_parallel_size)\n"
     "  File \"/workspace/Megatron-LM/megatron/mpu/utils.py\", line 24, in ensure_divisibility\n"
     "    assert numerator % denominator == 0, '{} is not divisible by {}'.format(\n"
     "AssertionError: 2 is not divisible by 4\n", "world-size-indivisible"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # vLLM's own pipeline check of the layers is tp-size-indivisible's, not Megatron's
    ("ValueError: Total number of hidden layers (30) must be divisible by pipeline parallel size (4).\n",
     "megatron-pp-layers"),
    # Megatron's interleaved schedule: layers per virtual stage, another setting
    ("AssertionError: number of layers is not divisible by number of layers per virtual pipeline stage\n",
     "megatron-pp-layers"),
    # Megatron's batch sizes against the data-parallel size (num_microbatches_calculator.py) are not the optimizer's
    ("AssertionError: global batch size (24) is not divisible by micro batch size (1) times data parallel size (5)\n",
     "megatron-distopt-instances"),
    # a checkpoint of another model (its depth, its width) compared the same way is not another layout
    ("AssertionError: num_layers value from checkpoint (24) is not equal to the input argument value (32).\n",
     "megatron-ckpt-parallel-mismatch"),
    ("AssertionError: hidden_size value from checkpoint (2048) is not equal to the currently set argument value "
     "(4096).\n", "megatron-ckpt-parallel-mismatch"),
    # DeepSpeed's own helper (MoE groups) stays its expert-parallel size
    ("  File \"/usr/lib/python3/dist-packages/deepspeed/utils/groups.py\", line 130, in _create_expert_and_data_parallel\n"
     "    _ensure_divisibility(world_size, expert_parallel_size_)\n"
     "  File \"/usr/lib/python3/dist-packages/deepspeed/utils/groups.py\", line 54, in _ensure_divisibility\n"
     "    assert numerator % denominator == 0, '{} is not divisible by {}'.format(\n"
     "AssertionError: 4 is not divisible by 8\n", "tp-size-indivisible"),
    # a helper of the same name in the user's own code says nothing of tensor parallelism
    ("  File \"/home/user/project/utils.py\", line 12, in divide\n    assert a % b == 0, f\"{a} is not divisible by {b}\"\n"
     "AssertionError: 10 is not divisible by 3\n", "tp-size-indivisible"),
    # the bare words without the helper's frame (a data loader's shard check)
    ("AssertionError: 1000 is not divisible by 3\n", "tp-size-indivisible"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_ds_helper_stays_the_moe_size():
    text = ("  File \"/usr/lib/python3/dist-packages/deepspeed/utils/groups.py\", line 130, in "
            "_create_expert_and_data_parallel\n    _ensure_divisibility(world_size, expert_parallel_size_)\n"
            "  File \"/usr/lib/python3/dist-packages/deepspeed/utils/groups.py\", line 54, in _ensure_divisibility\n"
            "    assert numerator % denominator == 0, '{} is not divisible by {}'.format(\n"
            "AssertionError: 4 is not divisible by 8\n")
    assert sig(text) == "ds-moe-ep-size"


def test_the_new_texts_are_translated():
    for s in (*PARALLEL_SIGNATURES, *FRAMEWORK_SIGNATURES):
        if s.name in NEW or s.name in ("tp-size-indivisible", "world-size-indivisible"):
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name
