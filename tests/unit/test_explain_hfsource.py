"""accelerate's and TRL's own refusals, read from their sources (review 73 of issue 45, no new logs): for each rule a
second wording (another version's or caller's words of the same check, from the library's source) and near misses
(what accelerate, TRL, transformers, torch or vLLM print with similar words and another cause) that must not be read
as it. The logs as the libraries print them are tests/data/explain/<name>.log."""

import pytest

from dscluster import explain

TB = ("Traceback (most recent call last):\n  File \"/home/u/train.py\", line 120, in <module>\n    main()\n"
      "  File \"/home/u/train.py\", line 88, in main\n    run()\n")


def sig(text: str) -> str | None:
    found = explain.explain(TB + text + "\n")
    return found.signature if found else None


SECOND = [
    # accelerate 0.15-0.2x's fill_match: "without `auto`(set to correct value)", a ZeRO bucket key.
    ("accelerate-ds-auto-value", "ValueError: `zero_optimization.reduce_bucket_size` not found in kwargs. Please specify "
     "`zero_optimization.reduce_bucket_size` without `auto`(set to correct value) in the DeepSpeed config file or pass "
     "it in kwargs."),
    ("accelerate-ds-mixed-precision", "[rank3]: ValueError: `--mixed_precision` arg cannot be set to `bf16` when `fp16` "
     "is set in the DeepSpeed config file."),
    ("accelerate-ds-no-zero", "[rank0]: ValueError: Please specify the ZeRO optimization config in the DeepSpeed config."),
    # Accelerator._prepare_deepspeed's other three refusals of the same rule.
    ("accelerate-ds-optimizer-source", "ValueError: You cannot create a `DummyOptim` without specifying an optimizer in "
     "the config file."),
    ("accelerate-ds-optimizer-source", "ValueError: You cannot specify a scheduler in the config file and in the code at "
     "the same time. Please remove the scheduler from the config file or create `accelerate.utils.DummyScheduler` in "
     "the code."),
    ("accelerate-ds-optimizer-source", "ValueError: Either specify a scheduler in the config file or pass in the "
     "`lr_scheduler_callable` parameter when using `accelerate.utils.DummyScheduler`."),
    ("accelerate-ds-optimizer-source", "ValueError: You can only specify `accelerate.utils.DummyScheduler` in the code "
     "when using `accelerate.utils.DummyOptim`."),
    # the HF Trainer's save_model under ZeRO-3 calls accelerate's get_state_dict.
    ("accelerate-zero3-16bit-save", "  File \"/x/transformers/trainer.py\", line 3934, in save_model\n"
     "    state_dict = self.accelerator.get_state_dict(self.deepspeed)\n"
     "ValueError: Cannot get 16bit model weights because `stage3_gather_16bit_weights_on_model_save` in DeepSpeed "
     "config is False. To save the model weights in 16bit, set `stage3_gather_16bit_weights_on_model_save` to True in "
     "DeepSpeed config file or set `zero3_save_16bit_model` to True when using `accelerate config`."),
    ("accelerate-ds-one-model", "[rank1]: AssertionError: You can't use same `Accelerator()` instance with multiple "
     "models when using DeepSpeed"),
    ("accelerate-mpi-master-addr", "[rank4]: ValueError: Tried to launch on distributed with multinode, but "
     "`MASTER_ADDR` env was not set, please try exporting rank 0's hostname as `MASTER_ADDR`"),
    # utils/fsdp_utils.py's FSDP1 wrap (0.2x), the same rule checked in the process instead of the launcher.
    ("accelerate-fsdp-sync-states", "ValueError: Set the `sync_module_states` flag to `True` so that model states are "
     "synced across processes when initializing FSDP object"),
    ("accelerate-fsdp2-setting", "ValueError: FSDP2 does not support LOCAL_STATE_DICT. Please set `fsdp_state_dict_type` "
     "to `SHARDED_STATE_DICT` or `FULL_STATE_DICT`."),
    ("accelerate-fsdp2-setting", "ValueError: forward_prefetch is not yet implemented in FSDP2, set to None or use "
     "`fsdp_version=1`"),
    ("accelerate-clip-grad-value", "[rank0]: Exception: DeepSpeed and FSDP  do not support `clip_grad_value_`. Use "
     "`clip_grad_norm_` instead."),
    ("accelerate-multi-gpu-one", "ValueError: You need to use at least 2 processes to use `--multi_gpu`."),
    # Accelerator._prepare_deepspeed's sibling of the no-dataloader refusal (a dataloader whose batch_size is None).
    ("accelerate-ds-batch-size", "ValueError: At least one of the dataloaders passed to `accelerate.prepare()` has "
     "`None` as batch size. Please set an integer value in `train_micro_batch_size_per_gpu` in the deepspeed config "
     "file or assign integer value to `AcceleratorState().deepspeed_plugin.deepspeed_config"
     "['train_micro_batch_size_per_gpu']`."),
    # KTOTrainer (and BCOTrainer) carry the same check.
    ("trl-precompute-ref-zero3", "  File \"/x/trl/trainer/kto_trainer.py\", line 770, in __init__\n    raise ValueError(\n"
     "ValueError: You cannot use `precompute_ref_log_probs=True` with Deepspeed ZeRO-3. Please set "
     "`precompute_ref_log_probs=False`."),
    # TRL 1.0's trl/generation/vllm_generation.py _init_vllm.
    ("trl-vllm-tp-world", "[rank2]: ValueError: tensor_parallel_size (2) must divide world size (3) evenly."),
    # PPOTrainer's wording (policy/ref_policy), and older DPO's "must mass a copy".
    ("trl-ref-model-same", "ValueError: `policy` and `ref_policy` cannot be the same object. If you want `ref_policy` to "
     "be the same as `policy`, you must mass a copy of it, or `None` if you use peft."),
    ("trl-ref-model-same", "ValueError: `model` and `ref_model` cannot be the same object. If you want `ref_model` to be "
     "the same as `model`, you must mass a copy of it, or `None` if you use peft."),
    ("trl-generation-batch-steps", "[rank0]: ValueError: 'generation_batch_size' and 'steps_per_generation' can not be "
     "both configured at the same time"),
]


@pytest.mark.parametrize("name,text", SECOND)
def test_second_wording(name: str, text: str) -> None:
    assert sig(text) == name


NEAR = [
    # accelerate's DeepSpeedPlugin.deepspeed_config_process: a value that contradicts, not an "auto" left unfilled.
    ("accelerate-ds-auto-value", "ValueError: Please correct the following DeepSpeed config values that mismatch kwargs  "
     "values:\n- ds gradient_clipping=0.5 vs arg gradient_clipping=1.0\nThe easiest method is to set these DeepSpeed "
     "config values to 'auto'."),
    # accelerate's _prepare_deepspeed: the model has no config for the hidden-size buckets (another refusal).
    ("accelerate-ds-auto-value", "ValueError: Can't find `model.config` entry, therefore it's not possible to "
     "automatically fill out the following `auto` entries in the DeepSpeed config file: "
     "['zero_optimization.reduce_bucket_size']. You can fix that by replacing `auto` values for these keys with an "
     "integer value of your choice."),
    # accelerate's own launcher: a mixed precision word it does not know, no DeepSpeed file involved.
    ("accelerate-ds-mixed-precision", "ValueError: Unknown mixed_precision mode: fp32. Choose between ['no', 'fp8', "
     "'fp16', 'bf16']."),
    # transformers' Trainer warning under ZeRO-3 (trainer.py save_model): it saves the full checkpoint instead.
    ("accelerate-zero3-16bit-save", "WARNING: deepspeed.save_16bit_model didn't save the model, since "
     "stage3_gather_16bit_weights_on_model_save=false. Saving the full checkpoint instead, use zero_to_fp32.py to "
     "recover weights"),
    # accelerate's Megatron-LM refusal of the same shape.
    ("accelerate-ds-one-model", "AssertionError: You can't use same `Accelerator()` instance with multiple models when "
     "using Megatron-LM"),
    # torch's env:// rendezvous without MASTER_ADDR: a launcher that set no address at all, not accelerate under MPI.
    ("accelerate-mpi-master-addr", "ValueError: Error initializing torch.distributed using env:// rendezvous: "
     "environment variable MASTER_ADDR expected, but not set"),
    # accelerate's torchao check: cpu_ram_efficient_loading refused for another reason.
    ("accelerate-fsdp-sync-states", "ValueError: torchao with FSDP2 and cpu_ram_efficient_loading is not supported, "
     "setting `cpu_ram_efficient_loading` to False will fix the issue and work as intended."),
    # the FSDP1 side of the same check: a bool given to FSDP1 is the reverse mistake.
    ("accelerate-fsdp2-setting", "ValueError: reshard_after_forward set to True. This is not supported with FSDP1, "
     "please set to a `str` or an instance of `torch.distributed.fsdp.fully_sharded_data_parallel.ShardingStrategy`"),
    # accelerate's launcher refusing too few GPU ids (already accelerate-config).
    ("accelerate-multi-gpu-one", "ValueError: Less than two GPU ids were configured and tried to run on multiple GPUs. "
     "Please ensure at least two are specified for `--gpu_ids`, or use `--gpu_ids='all'`."),
    # TRL's DPO: precompute refused for an IterableDataset, not for ZeRO-3.
    ("trl-precompute-ref-zero3", "ValueError: `precompute_ref_log_probs=True` is not supported with IterableDataset. "
     "Please use a map-style Dataset or set `precompute_ref_log_probs=False`."),
    # vLLM's own check of the model's heads against its tensor-parallel size.
    ("trl-vllm-tp-world", "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size "
     "(8)."),
    # TRL's DPO refusing a reference model beside adapters (trl-ref-model-peft).
    ("trl-ref-model-same", "ValueError: You passed both a ref_model and a peft_config. For training PEFT adapters with "
     "DPO there is no need to pass a reference model."),
    # GRPOConfig's group check (grpo-generations-batch).
    ("trl-generation-batch-steps", "ValueError: generation_batch_size (12) must be divisible by num_generations (8)."),
]


@pytest.mark.parametrize("name,text", NEAR)
def test_near_miss(name: str, text: str) -> None:
    assert sig(text) != name


def test_near_misses_keep_their_own_answers() -> None:
    assert sig(NEAR[8][1]) == "accelerate-config"
    assert sig(NEAR[11][1]) == "trl-ref-model-peft"
    assert sig(NEAR[12][1]) == "grpo-generations-batch"
