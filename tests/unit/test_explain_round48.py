"""Round 48's rules (issue 45), from DeepSpeed's own tracker, 2024-2026 (sigdeepspeed.py, sigtorch.py): DeepSpeed's code
asking one of its own modules for a function that release does not define, ZeRO-Offload refusing DeepSpeed's own CPU
optimizer as a client one, ZeRO-1/2 given a parameter with no elements, a ZeRO-1/2 gradient hook run outside the
engine's backward, and torch.distributed.nn's all_gather backward on a subgroup before PyTorch 2.3: a second wording of
each, in another version's or another caller's words than the corpus case it was written from, and near misses that
must not be read as it."""


import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster.sigdeepspeed import DEEPSPEED_SIGNATURES
from dscluster.sigtorch import TORCH_SIGNATURES

NEW = ("ds-cpu-optimizer-refused", "zero-empty-param", "ds-loss-backward", "torch-allgather-subgroup")


@pytest.mark.parametrize("text,expected", [
    # deepspeedai/DeepSpeed#7833 (a comment's reproduction): utils/bwc.py, not the engine, asks the Ulysses module, from
    # dist-packages, Python 3.12's carets, no rank prefix, no "Did you mean" (the case was engine.py from a checkout)
    ("Traceback (most recent call last):\n  File \"repro.py\", line 23, in <module>\n"
     "    bwc.bwc_tensor_model_parallel_rank(mpu=sp_module)\n"
     "  File \"/usr/local/lib/python3.12/dist-packages/deepspeed/utils/bwc.py\", line 42, in "
     "bwc_tensor_model_parallel_rank\n    return mpu.get_model_parallel_rank()\n           ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "AttributeError: module 'deepspeed.runtime.sequence_parallel.parallel_state_sp' has no attribute "
     "'get_model_parallel_rank'\n", "package-too-old"),
    # engine.py's check refusing DeepSpeed's CPU Adagrad, which it does not list either (the case was CPU Lion)
    ("deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided optimizer "
     "(<class 'deepspeed.ops.adagrad.cpu_adagrad.DeepSpeedCPUAdagrad'>) which in most cases will yield poor "
     "performance. Please either use deepspeed.ops.adam.DeepSpeedCPUAdam or set an optimizer in your ds-config "
     "(https://www.deepspeed.ai/docs/config-json/#optimizer-parameters). If you really want to use a custom optimizer "
     "w. ZeRO-Offload and understand the performance impacts you can also set <\"zero_force_ds_cpu_optimizer\": false> "
     "in your configuration file.\n", "ds-cpu-optimizer-refused"),
    # stage_1_and_2.py's average_tensor as a traceback prints it, Python 3.11's carets under the lookup (the case
    # quoted the error first, then the line)
    ("  File \"/usr/local/lib/python3.11/site-packages/deepspeed/runtime/zero/stage_1_and_2.py\", line 1104, in "
     "average_tensor\n    partition_ids = self.param_to_partition_ids[i][param_id]\n"
     "                    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~^^^^^^^^^^\nKeyError: 2\n", "zero-empty-param"),
    # tensor_fragment.py's assertion at another offset, under a rank prefix (the case: offset 8, bare)
    ("[rank1]:   File \"/opt/conda/lib/python3.10/site-packages/deepspeed/utils/tensor_fragment.py\", line 262, in "
     "get_hp_fragment_mapping\n[rank1]:     assert fragment_start < fragment_end, \\\n"
     "[rank1]: AssertionError: fragment start 1024 should be < fragment_end 1024\n", "zero-empty-param"),
    # deepspeedai/DeepSpeed#1218's title: the ZeRO optimizer's name before 0.6 (the case: DeepSpeedZeroOptimizer)
    ("AttributeError: 'FP16_DeepSpeedZeroOptimizer' object has no attribute 'ipg_index'\n", "ds-loss-backward"),
    # an older torch's functional.py at another line, Python 3.11's carets under the index (the case: 2.x, no carets)
    ("  File \"/opt/conda/lib/python3.11/site-packages/torch/distributed/nn/functional.py\", line 309, in backward\n"
     "    gx = torch.empty_like(grad_outputs[rank])\n                          ~~~~~~~~~~~~^^^^^^\n"
     "IndexError: tuple index out of range\n", "torch-allgather-subgroup"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # NVIDIA/DeepLearningExamples#1386: a circular import (onnxruntime-training importing DeepSpeed half-way), raised in
    # DeepSpeed's own frame: not a name this release lacks
    ("  File \"/usr/local/lib/python3.10/dist-packages/deepspeed/moe/sharded_moe.py\", line 99, in _AllToAll\n"
     "    def forward(ctx: Any, group: dist.ProcessGroup, input: Tensor) -> Tensor:  # type: ignore\n"
     "AttributeError: partially initialized module 'deepspeed.comm' has no attribute 'ProcessGroup' (most likely due "
     "to a circular import)\n", "package-too-old"),
    # deepspeedai/DeepSpeed#6656's title: torch's module missing a name DeepSpeed asks for is torch in another version
    ("deepspeed.utils.logging: module 'torch.compiler' has no attribute 'is_compiling'\n", "package-too-old"),
    # facebookresearch/esm#652's title: another package asking an old DeepSpeed for deepspeed.comm
    ("AttributeError: module 'deepspeed' has no attribute 'comm'\n", "package-too-old"),
    # a torch optimizer under ZeRO-Offload is the refusal DeepSpeed means (ds-config-invalid)
    ("[rank0]: deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided "
     "optimizer (<class 'torch.optim.adamw.AdamW'>) which in most cases will yield poor performance. Please either use "
     "deepspeed.ops.adam.DeepSpeedCPUAdam or set an optimizer in your ds-config\n", "ds-cpu-optimizer-refused"),
    # DeepSpeed's own GPU FusedAdam under ZeRO-Offload is not a CPU optimizer: rightly refused
    ("deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided optimizer "
     "(<class 'deepspeed.ops.adam.fused_adam.FusedAdam'>) which in most cases will yield poor performance.\n",
     "ds-cpu-optimizer-refused"),
    # the assertion right under that lookup in average_tensor: partition ids past the group's size, not a missing one
    ("    assert all([p_id < dist.get_world_size(group=process_group) for p_id in partition_ids\n"
     "AssertionError: world size 4 and p_ids: [5]\n", "zero-empty-param"),
    # a KeyError of a model type transformers does not know, with no ZeRO lookup near it
    ("    config_class = CONFIG_MAPPING[config_dict[\"model_type\"]]\nKeyError: 'qwen2'\n", "zero-empty-param"),
    # the ZeRO-3 optimizer without the accelerate API the Trainer calls (lmms-finetune#64): a version, not backward
    ("AttributeError: 'DeepSpeedZeroOptimizer_Stage3' object has no attribute 'train'\n", "ds-loss-backward"),
    # a DeepSpeed renamed method (THUDM/Chinese-Transformer-XL#12): another version, not the backward outside the engine
    ("AttributeError: 'DeepSpeedZeroOptimizer' object has no attribute '_restore_from_fp16_weights'\n",
     "ds-loss-backward"),
    # transformers' older models indexing an empty past_key_values: another IndexError
    ("    past_key_values_length = past_key_values[0][0].shape[2]\nIndexError: tuple index out of range\n",
     "torch-allgather-subgroup"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_the_new_texts_are_translated():
    for s in (*DEEPSPEED_SIGNATURES, *TORCH_SIGNATURES):
        if s.name in NEW or s.cause.startswith("DeepSpeed failed in its own code"):
            assert FAILURES_ZH.get(s.cause) and FAILURES_ZH.get(s.fix), s.name
