"""Round 152's rule (issue 45), from threads of DeepSpeed ZeRO-3 and ZeRO-Offload failures in multi-GPU training:
DeepSpeed's CPU optimizers asserting that a parameter they step is on the CPU (deepspeed/ops/adam/cpu_adam.py
DeepSpeedCPUAdam.step; in huggingface/trl#955 a DPO reference model TRL initialized with the training config's
optimizer offload at ZeRO stage 0), read as cpu-adam-param-on-gpu; second wordings of it, in another version's or
caller's words than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("cpu-adam-param-on-gpu",)


def test_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # huggingface/trl PR #5916's words (its repro under accelerate, the assertion's first clause alone)
    ("[rank0]:   File \"/usr/local/lib/python3.12/site-packages/trl/models/utils.py\", line 287, in prepare_deepspeed\n"
     "[rank0]:     model, *_ = deepspeed.initialize(model=model, config=config_kwargs)\n"
     "AssertionError: CPUAdam param is on cuda:0 and must be 'cpu'\n"),
    # DeepSpeedCPUAdam.step_subgroup of today's cpu_adam.py (param.device, a parenthesised message)
    ("  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/ops/adam/cpu_adam.py\", line 232, in step_subgroup\n"
     "    assert param.device == device, (\n"
     "AssertionError: CPUAdam param is on cuda:3 and must be 'cpu', make sure you enabled 'offload_optimizer': 'cpu' "
     "in your ZeRO config.\n"),
    # DeepSpeedCPULion.step (deepspeed/ops/lion/cpu_lion.py), the same check in its own name
    ("  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/ops/lion/cpu_lion.py\", line 103, in step\n"
     "AssertionError: CPULion param is on cuda:1 and must be 'cpu', make sure you enabled 'offload_optimizer': 'cpu' "
     "in your ZeRO config.\n"),
])
def test_cpu_optimizer_param_on_gpu(text):
    assert sig(text) == "cpu-adam-param-on-gpu"


@pytest.mark.parametrize("text", [
    # DeepSpeed's engine naming the optimizer it built (runtime/engine.py log_dist), a healthy offload run
    ("[2024-01-22 16:50:42,012] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed Basic Optimizer = DeepSpeedCPUAdam\n"
     "[2024-01-22 16:50:42,012] [INFO] [utils.py:56:is_zero_supported_optimizer] Checking ZeRO support for "
     "optimizer=DeepSpeedCPUAdam type=<class 'deepspeed.ops.adam.cpu_adam.DeepSpeedCPUAdam'>\n"),
    # transformers' integrations/deepspeed.py info line (LlamaFactory#3956's log)
    ("[INFO|deepspeed.py:328] 2024-05-29 06:14:17,010 >> Detected ZeRO Offload and non-DeepSpeed optimizers: This "
     "combination should work as long as the custom optimizer has both CPU and GPU implementation (except LAMB)\n"),
    # DeepSpeed's refusal of a client optimizer under ZeRO-Offload (runtime/engine.py, zero_force_ds_cpu_optimizer)
    ("deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided optimizer "
     "(<class 'torch.optim.adamw.AdamW'>) which in most cases will yield poor performance. Please either use "
     "deepspeed.ops.adam.DeepSpeedCPUAdam or set an optimizer in your ds-config "
     "(https://www.deepspeed.ai/docs/config-json/#optimizer-parameters).\n"),
    # torch's device check in ZeRO-3's offloaded step (deepspeed#5538's regression), not the CPU optimizer's own
    ("  File \".../site-packages/deepspeed/runtime/zero/stage3.py\", line 2117, in unscale_and_clip_grads\n"
     "    self.fp32_partitioned_groups_flat[sub_group_id].grad.mul_(1. / combined_scale)\n"
     "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:2 and cpu!\n"),
])
def test_near_misses_are_not_cpu_adam_param_on_gpu(text):
    assert sig(text) != "cpu-adam-param-on-gpu"
