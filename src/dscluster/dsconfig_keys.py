"""What DeepSpeed 0.19.8 accepts in a ds_config, as dsconfig.py checks it: the top-level keys it reads (and
those it removed), the ZeRO keys, its optimizers and schedulers with their parameters, the batch keys.
Recorded from DeepSpeed's own config classes; a new DeepSpeed release is checked against this table."""

from __future__ import annotations

# Top-level keys DeepSpeed 0.19.8 reads (recorded from DeepSpeedConfig + engine + subsystem configs).
KNOWN_TOP_LEVEL = frozenset({
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "optimizer",
    "scheduler", "fp16", "bf16", "bfloat16", "torch_autocast", "zero_optimization", "gradient_clipping",
    "steps_per_print", "wall_clock_breakdown", "memory_breakdown", "dump_state", "prescale_gradients",
    "gradient_predivide_factor", "gradient_allreduce_op", "communication_data_type",
    "seq_parallel_communication_data_type", "disable_allgather", "disable_python_gc",
    "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "activation_checkpointing",
    "flops_profiler", "tensorboard", "wandb", "csv_monitor", "comet", "comms_logger", "checkpoint",
    "data_types", "dataloader_drop_last", "data_efficiency", "aio", "autotuning", "pipeline",
    "tensor_parallel", "expert_parallel", "hybrid_engine", "weight_quantization", "compile", "timers",
    "log_level", "managed_gradient_accumulation", "use_data_before_expert_parallelism",
    "vocabulary_size", "sequence_parallel_size", "datastates_ckpt", "deepcompile",
})
# Removed in DeepSpeed 0.19.8: DeepSpeedConfig raises on them (config.py _REMOVED_TOP_LEVEL_CONFIG_KEYS).
REMOVED_TOP_LEVEL = {
    "nebula": "Nebula checkpointing", "compression_training": "the compression library",
    "amp": "Apex AMP (use 'bf16' or 'fp16')", "quantize_training": "MoQ quantize_training",
    "sparse_gradients": "sparse embedding gradients", "eigenvalue": "eigenvalue MoQ",
    "sparse_attention": "sparse attention", "elasticity": "elastic training",
    "progressive_layer_drop": "progressive layer drop", "curriculum_learning": "legacy curriculum learning",
    "graph_harvesting": "graph harvesting",
}
REMOVED_ZERO = ("mics_shard_size", "mics_hierarchical_params_gather", "zeropp_loco_param")
KNOWN_ZERO = frozenset({
    "stage", "allgather_bucket_size", "allgather_partitions", "allgather_sequential", "compute_grad_norm",
    "contiguous_gradients", "cpu_offload", "cpu_offload_param", "cpu_offload_use_pin_memory",
    "elastic_checkpoint", "enable_sanity_checks", "gather_16bit_weights_on_model_save",
    "ignore_unused_parameters", "leaf_module", "legacy_stage1", "load_from_fp32_weights",
    "log_trace_cache_warnings", "max_live_parameters", "max_reuse_distance", "memory_efficient_linear",
    "model_persistence_threshold", "module_granularity_threshold", "offload_optimizer", "offload_param",
    "overlap_comm", "override_module_apply", "param_persistence_threshold", "parameter_alignment",
    "pipeline_loading_checkpoint", "prefetch_bucket_size", "reduce_bucket_size", "reduce_scatter",
    "round_robin_gradients", "save_muon_momentum_buffer_in_memory", "stage3_allgather_sequential",
    "stage3_gather_16bit_weights_on_model_save", "stage3_gather_fp16_weights_on_model_save",
    "stage3_max_live_parameters", "stage3_max_reuse_distance", "stage3_model_persistence_threshold",
    "stage3_module_granularity_threshold", "stage3_param_persistence_threshold", "stage3_prefetch_bucket_size",
    "stage3_use_all_reduce_for_fetch_params", "sub_group_size", "use_all_reduce_for_fetch_params",
    "use_multi_rank_bucket_allreduce", "zenflow", "zero_hpz_partition_size", "zero_quantized_gradients",
    "zero_quantized_nontrainable_weights", "zero_quantized_weights",
})
DS_OPTIMIZERS = ("Adam", "AdamW", "Adagrad", "Lamb", "Lion", "MuAdam", "MuAdamW", "MuSGD", "Muon")
SCHEDULERS = {
    "WarmupLR": ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type", "last_batch_iteration"),
    "WarmupDecayLR": ("total_num_steps", "warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type",
                      "last_batch_iteration"),
    "WarmupCosineLR": ("total_num_steps", "warmup_min_ratio", "warmup_num_steps", "cos_min_ratio", "warmup_type",
                       "last_batch_iteration"),
    "OneCycle": ("cycle_min_lr", "cycle_max_lr", "decay_lr_rate", "cycle_first_step_size", "cycle_second_step_size",
                 "cycle_first_stair_count", "cycle_second_stair_count", "decay_step_size", "cycle_momentum",
                 "cycle_min_mom", "cycle_max_mom", "decay_mom_rate", "last_batch_iteration"),
    "LRRangeTest": ("lr_range_test_min_lr", "lr_range_test_step_size", "lr_range_test_step_rate",
                    "lr_range_test_staircase", "last_batch_iteration"),
}
# Adam/AdamW parameters across torch.optim, DeepSpeed's FusedAdam and DeepSpeedCPUAdam: a name outside
# these is a TypeError inside every rank after start-up ("unexpected keyword argument 'learning_rate'").
ADAM_PARAMS = ("lr", "betas", "eps", "weight_decay", "amsgrad", "bias_correction", "adam_w_mode", "torch_adam",
               "fused", "foreach", "maximize", "capturable", "differentiable", "set_grad_none", "decoupled_weight_decay")
_PARAM_ALIASES = {"learning_rate": "lr", "learningrate": "lr", "beta": "betas", "epsilon": "eps", "wd": "weight_decay"}
BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


def scheduler_params(stype: object) -> tuple[str, ...] | None:
    """The params scheduler.type takes, its last one the resume counter (last_batch_iteration, last_epoch): DeepSpeed's
    own schedulers', else a torch.optim.lr_scheduler class's keywords, which DeepSpeed builds by name too
    (runtime/engine.py _scheduler_from_config: type(optimizer, **params)). None: neither, or a class whose keywords
    are open (**kwargs)."""
    if not isinstance(stype, str):
        return None
    if stype in SCHEDULERS:
        return SCHEDULERS[stype]
    import inspect

    import torch.optim.lr_scheduler as torch_schedulers

    cls = getattr(torch_schedulers, stype, None)
    if not (isinstance(cls, type) and cls.__module__ == torch_schedulers.__name__ and hasattr(cls, "step")):
        return None
    params = list(inspect.signature(cls.__init__).parameters.values())[2:]  # past self and optimizer
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return tuple(p.name for p in params)
