"""Round 135's rules (issue 45), from threads of turning a distributed training's checkpoint into a usable model and
saving it at the end of training: FSDP's full-state-dict gather running out of GPU memory (torch's `Failed to clone()
tensor with name ... Error: CUDA out of memory` warning), a ZeRO-3 save handed the bare model instead of the DeepSpeed
engine (`object has no attribute 'zero_gather_16bit_weights_on_model_save'`), and zero_to_fp32.py before DeepSpeed
0.10.0 refusing a ZeRO-1 checkpoint (`unknown zero stage 1`, package-too-old). Each: a second wording (another
version's or caller's words than the corpus case it was written from) and near misses, other components' text with
like words that must not be read as it."""

import pytest
from explain_rounds import FAILURES_ZH, sig, translated_and_final

from dscluster import explain

NEW = ("fsdp-full-state-dict-gpu-oom", "zero3-save-unwrapped-model")

_CLONE = ("This may mean that this state_dict entry could point to invalid memory regions after returning from "
          "state_dict() call if this parameter is managed by FSDP. Please check clone implementation of ")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


def test_the_zero_to_fp32_stage_rule_is_translated_and_final():
    by_cause = {s.cause: s for s in explain.SIGNATURES if s.name == "package-too-old"}
    rule = next(s for c, s in by_cause.items() if c.startswith("zero_to_fp32.py refused the checkpoint's ZeRO stage"))
    assert rule.cause in FAILURES_ZH and rule.fix in FAILURES_ZH and not rule.retry


@pytest.mark.parametrize("text", [
    # torch 1.13's fully_sharded_data_parallel.py (no "on rank"), under a rank prefix
    ("[rank1]: /opt/conda/lib/python3.9/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py:2214: "
     "UserWarning: Failed to clone() tensor with name model.embed_tokens.weight. " + _CLONE +
     "model.embed_tokens.weight. Error: CUDA out of memory. Tried to allocate 250.00 MiB (GPU 1; 23.69 GiB total "
     "capacity; 22.61 GiB already allocated; 180.94 MiB free; 22.95 GiB reserved in total by PyTorch)\n"),
    # torch 2.x's _state_dict_utils.py ("on rank N"), the warning wrapped over lines as a terminal or a post shows it
    ("/opt/python3.10.11/lib/python3.10/site-packages/torch/distributed/fsdp/_state_dict_utils.py:331: \n"
     "    UserWarning: Failed to clone() tensor with name _fsdp_wrapped_module.model.layers.28.mlp.down_proj.weight "
     "on rank 3. This may mean that this state_dict entry could point to invalid memory regions after returning from \n"
     "    state_dict() call if this parameter is managed by FSDP. \n"
     "    Please check clone implementation of _fsdp_wrapped_module.model.layers.28.mlp.down_proj.weight. \n"
     "    Error: CUDA out of memory. Tried to allocate 172.00 MiB. GPU 3 has a total capacity of 39.39 GiB\n"),
])
def test_an_fsdp_full_state_dict_gather_out_of_gpu_memory(text):
    assert sig(text) == "fsdp-full-state-dict-gpu-oom"


@pytest.mark.parametrize("text,not_expected", [
    # the same warning for another error: a tensor without storage (a meta or fake parameter), not memory
    ("UserWarning: Failed to clone() tensor with name lm_head.weight on rank 0. " + _CLONE + "lm_head.weight. Error: "
     "Cannot access data pointer of Tensor that doesn't have storage\n", "fsdp-full-state-dict-gpu-oom"),
    # the offloaded clone (`.cpu().clone()`) failing in host memory: c10's CPU allocator, another fix (host RAM)
    ("UserWarning: Failed to clone() tensor with name lm_head.weight on rank 0. " + _CLONE + "lm_head.weight. Error: "
     "[enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate "
     "1048576000 bytes. Error code 12 (Cannot allocate memory)\n", "fsdp-full-state-dict-gpu-oom"),
    # an out-of-memory in a training step: the plain one
    ('  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 114, in forward\n'
     "    return F.linear(input, self.weight, self.bias)\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 502.00 MiB. GPU 1 has a total capacity of 39.39 GiB "
     "of which 276.19 MiB is free.\n", "fsdp-full-state-dict-gpu-oom"),
])
def test_not_an_fsdp_full_state_dict_gather(text, not_expected):
    assert sig(text) != not_expected


def test_a_training_step_oom_stays_the_plain_one():
    text = ('  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 114, in forward\n'
            "    return F.linear(input, self.weight, self.bias)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 502.00 MiB. GPU 1 has a total capacity of "
            "39.39 GiB of which 276.19 MiB is free.\n")
    assert sig(text) == "cuda-oom"


@pytest.mark.parametrize("text", [
    # huggingface/trl#1938's words (accelerate's get_state_dict handed None), a second caller
    ("    state_dict = self.accelerator.get_state_dict(self.backup_model)\n"
     '  File "/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py", line 3240, in get_state_dict\n'
     "    if model.zero_gather_16bit_weights_on_model_save():\n"
     "AttributeError: 'NoneType' object has no attribute 'zero_gather_16bit_weights_on_model_save'\n"),
    # ms-swift's PPO (modelscope/ms-swift#3280's title), under torch's rank prefix
    ('[rank0]:   File "/home/work/.local/torch/nn/modules/module.py", line 1928, in __getattr__\n'
     "[rank0]:     raise AttributeError(\n"
     "[rank0]: AttributeError: 'Qwen2ForCausalLM' object has no attribute 'zero_gather_16bit_weights_on_model_save'\n"),
    # a PEFT-wrapped model passed to the save
    ("AttributeError: 'PeftModelForCausalLM' object has no attribute 'zero_gather_16bit_weights_on_model_save'\n"),
])
def test_a_zero3_save_given_the_bare_model(text):
    assert sig(text) == "zero3-save-unwrapped-model"


@pytest.mark.parametrize("text,expected", [
    # accelerate's own refusal: the engine was given, the config does not gather (its own family)
    ("ValueError: Cannot get 16bit model weights because `stage3_gather_16bit_weights_on_model_save` in DeepSpeed "
     "config is False. To save the model weights in 16bit, set `stage3_gather_16bit_weights_on_model_save` to True in "
     "DeepSpeed config file or set `zero3_save_16bit_model` to True when using `accelerate config`.\n",
     "accelerate-zero3-16bit-save"),
])
def test_the_zero3_16bit_setting_stays_its_own(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text", [
    # the engine itself without the method: a DeepSpeed from before its name, not the bare model
    "AttributeError: 'DeepSpeedEngine' object has no attribute 'zero_gather_16bit_weights_on_model_save'\n",
    # another engine method asked of the bare model (hiyouga/LlamaFactory#4390's words): not this save
    "AttributeError: 'Qwen2ForCausalLM' object has no attribute 'save_checkpoint'\n",
    # the older name of the method
    "AttributeError: 'GPT2LMHeadModel' object has no attribute 'zero_gather_fp16_weights_on_model_save'\n",
])
def test_not_a_zero3_save_given_the_bare_model(text):
    assert sig(text) != "zero3-save-unwrapped-model"


def _zero_to_fp32(stage: int) -> str:
    return ("Processing zero checkpoint 'checkpoints/last.ckpt/checkpoint'\n"
            "Traceback (most recent call last):\n"
            '  File "convert.py", line 4, in <module>\n'
            "    convert_zero_checkpoint_to_fp32_state_dict(save_path, output_path)\n"
            '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/utils/zero_to_fp32.py", line 198, in '
            "_get_fp32_state_dict_from_zero_checkpoint\n"
            "    zero_stage, world_size, fp32_flat_groups = parse_optim_states(optim_files, ds_checkpoint_dir)\n"
            '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/utils/zero_to_fp32.py", line 173, in '
            "parse_optim_states\n"
            '    raise ValueError(f"unknown zero stage {zero_stage}")\n'
            f"ValueError: unknown zero stage {stage}\n")


@pytest.mark.parametrize("text", [
    # DeepSpeed 0.9's zero_to_fp32.py through Lightning's convert_zero_checkpoint_to_fp32_state_dict on a ZeRO-1 run
    _zero_to_fp32(1),
    # the message alone, as a post quotes it
    "ValueError: unknown zero stage 1\n",
])
def test_zero_to_fp32_refusing_a_zero1_checkpoint(text):
    found = explain.explain(text)
    assert found and found.signature == "package-too-old"
    assert found.cause.startswith("zero_to_fp32.py refused the checkpoint's ZeRO stage")


@pytest.mark.parametrize("text", [
    # stage 0 (no ZeRO): a newer zero_to_fp32.py does not convert it either (deepspeedai/DeepSpeed#6699)
    _zero_to_fp32(0),
    "ValueError: unknown zero stage 0\n",
])
def test_not_the_zero1_refusal(text):
    found = explain.explain(text)
    assert not (found and found.cause.startswith("zero_to_fp32.py refused the checkpoint's ZeRO stage"))


def test_an_incomplete_zero_checkpoint_stays_its_own():
    text = ("ValueError: Expected 4 of '*_optim_states.pt' under 'global_step500' but found 2 files. Possibly due to "
            "an overwrite of an old checkpoint, or a checkpoint didn't get saved by one or more processes.\n")
    assert sig(text) == "zero-ckpt-incomplete"
