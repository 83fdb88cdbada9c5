"""Round 128's rules (issue 45), from threads on FP8 and mixed precision on several GPUs: accelerate 0.33 and older
refusing mixed_precision fp8 under FSDP (its FSDP plugin's set_mixed_precision: `Unknown mixed precision value: fp8`;
FP8 with FSDP came in 0.34, huggingface/accelerate#2983), and torch's all-gather given an output buffer of another
dtype than its input (ProcessGroupNCCL's _allgather_base: `output tensor must have the same type as input tensor`),
which under DeepSpeed ZeRO-3 means parameters not all in the precision it partitioned them in (an fp16 config over a
bf16 model). A second wording of each, in another version's or caller's words than the corpus case it was written
from, and near misses that must not be read as it. Round 128's third case (torchao float8 under FSDP2, an empty
shard) is in NOT_WRITTEN: its log shows only torch's refusal of max() over an empty tensor."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("accelerate-fsdp-fp8-unsupported", "allgather-dtype-mismatch")


@pytest.mark.parametrize("text,expected", [
    # accelerate 0.32/0.33 (utils/dataclasses.py line 1395) created by the HF Trainer (transformers' trainer.py
    # create_accelerator_and_postprocess), ACCELERATE_MIXED_PRECISION=fp8 from the accelerate config, under a rank prefix
    ("[rank1]:   File \"/opt/conda/lib/python3.11/site-packages/transformers/trainer.py\", line 4821, in "
     "create_accelerator_and_postprocess\n"
     "[rank1]:     self.accelerator = Accelerator(**args)\n"
     "[rank1]:   File \"/opt/conda/lib/python3.11/site-packages/accelerate/state.py\", line 891, in __init__\n"
     "[rank1]:     fsdp_plugin.set_mixed_precision(self._mixed_precision)\n"
     "[rank1]:   File \"/opt/conda/lib/python3.11/site-packages/accelerate/utils/dataclasses.py\", line 1395, in "
     "set_mixed_precision\n"
     "[rank1]:     raise ValueError(f\"Unknown mixed precision value: {mixed_precision}\")\n"
     "[rank1]: ValueError: Unknown mixed precision value: fp8\n", "accelerate-fsdp-fp8-unsupported"),
    # torch 1.13/2.0's RuntimeError form (ProcessGroupNCCL.cpp _allgather_base: std::runtime_error), ZeRO-3 gathering a
    # parameter in the forward (DeepSpeed's partition_parameters.py all_gather_coalesced), a rank prefix of pdsh
    ("node2:   File \"/usr/lib/python3/dist-packages/deepspeed/runtime/zero/partition_parameters.py\", line 1083, in "
     "all_gather_coalesced\n"
     "node2:     handle = _dist_allgather_fn(param.ds_tensor.to(get_accelerator().current_device_name()), param_buffer,\n"
     "node2:   File \"/usr/lib/python3/dist-packages/deepspeed/comm/comm.py\", line 305, in allgather_fn\n"
     "node2:     return all_gather_into_tensor(output_tensor, input_tensor, group=group, async_op=async_op, debug=debug)\n"
     "node2: RuntimeError: output tensor must have the same type as input tensor\n", "allgather-dtype-mismatch"),
    # recent torch's TypeError form (test_c10d_nccl.py's assertRaisesRegex(TypeError, ...)), as a rank's last line
    ("[rank0]: TypeError: output tensor must have the same type as input tensor\n", "allgather-dtype-mismatch"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the FSDP plugin's refusal of another word (a typo in the config), not fp8
    ("ValueError: Unknown mixed precision value: bf61\n", "accelerate-fsdp-fp8-unsupported"),
    # accelerate 0.3x's Accelerator.__init__ (accelerator.py): an FP8 recipe without mixed_precision fp8
    ("ValueError: Passing in a `FP8RecipeKwargs` object requires setting `mixed_precision='fp8'`.\n",
     "accelerate-fsdp-fp8-unsupported"),
    # accelerate 0.28's DeepSpeedPlugin.set_mixed_precision with fp8 beside an fp16 section: DeepSpeed's own conflict
    ("ValueError: `--mixed_precision` arg cannot be set to `fp8` when `fp16` is set in the DeepSpeed config file.\n",
     "accelerate-fsdp-fp8-unsupported"),
    # Lightning's precision connector (accelerator_connector.py): a precision word it does not know
    ("ValueError: Precision 'fp8' is invalid. Allowed precision values: ('transformer-engine', "
     "'transformer-engine-float16', '16-true', '16-mixed', 'bf16-true', 'bf16-mixed', '32-true', '64-true')\n",
     "accelerate-fsdp-fp8-unsupported"),
    # the size check beside the dtype check in _allgather_base: another fault (a buffer not world_size times the input)
    ("RuntimeError: output tensor size must be equal to world_size times input tensor size\n",
     "allgather-dtype-mismatch"),
    # a module's weights and its input in different dtypes (kohya-ss/sd-scripts#1281 under DeepSpeed): no collective
    ("RuntimeError: Input type (float) and bias type (c10::BFloat16) should be the same\n", "allgather-dtype-mismatch"),
    # an op's operands in different dtypes (KimMeen/Time-LLM#3): no collective
    ("RuntimeError: expected scalar type Float but found BFloat16\n", "allgather-dtype-mismatch"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_deepspeed_fp8_conflict_stays_accelerates_deepspeed_precision_check():
    assert sig("ValueError: `--mixed_precision` arg cannot be set to `fp8` when `fp16` is set in the DeepSpeed config "
               "file.\n") == "accelerate-ds-mixed-precision"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
