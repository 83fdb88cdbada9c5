"""Failure signatures of Hugging Face's training stack in its own words (round 25 of issue 45): the Trainer refusing a
model loaded before ZeRO-3 was in effect, and accelerate's launcher given several machines but no rank for this one;
round 49: TrainingArguments refusing an fsdp word, accelerate refusing its config file's unknown keys, FSDP2's
prepare() given the optimizer alone, DDP given a model with DTensor parameters; round 57: accelerate 0.5-0.6 reading a
DeepSpeed config section its own generated config lacks.
Each pattern is the wording of the code that prints it (transformers' trainer.py, accelerate's utils/launch.py), never
one log's; `retry=False` throughout: the same command meets the same check again. sigmessages.py places this table
after the other frameworks'. The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

HF_SIGNATURES: tuple[Signature, ...] = (
    # transformers' Trainer (_validate_model / __init__): `if is_deepspeed_zero3_enabled() and not getattr(model,
    # "_transformers_zero3_init_used", True): raise ValueError("Model was not initialized with `Zero-3` despite being
    # configured for DeepSpeed Zero-3. Please re-initialize your model via `Model.from_pretrained(...)` or
    # `Model.from_config(...)` after creating your `TrainingArguments`!")`; from_pretrained marks the model when
    # deepspeed.zero.Init was not used for it (ZeRO-3 not yet on when it was loaded).
    _sig("zero3-not-initialized", r"Model was not initiali[sz]ed with `?Zero-?3`? despite being configured",
         "The Trainer refused the model: the run is configured for DeepSpeed ZeRO-3, but the model was loaded without "
         "ZeRO-3's partitioned initialisation (deepspeed.zero.Init), because it was loaded before the "
         "TrainingArguments (or SFTConfig) that turn ZeRO-3 on were created, or in a way that skips it.",
         "Create the TrainingArguments/SFTConfig with the ZeRO-3 config first and load the model after them with "
         "from_pretrained/from_config (or give the Trainer model_init= that loads it); for a quantized (QLoRA) model, "
         "follow PEFT's ZeRO-3 recipe (accelerate launch with zero3_init_flag) or use ZeRO-2. A restart fails the "
         "same way.", retry=False),
    # accelerate's utils/launch.py (prepare_multi_gpu_env: `setattr(args, "node_rank", int(args.machine_rank))`; its
    # port check `int(args.machine_rank) == 0`): with num_machines > 1 and no --machine_rank (nor machine_rank in the
    # config file) the rank is None, and Python's int() says so. The frame's source line is Python's own quote of
    # accelerate's code.
    _sig("accelerate-config", r"int\(args\.machine_rank\)(?:(?!int\(args\.machine_rank\))[^\n])*\n(?:[ \t]*[~^]+[ \t]*\n)?[ \t]*TypeError: int\(\) "
         r"argument must be [^\n]{0,80}not '?NoneType'?",
         "accelerate launch was started for several machines (num_machines > 1) without this machine's rank: no "
         "--machine_rank on the command line and no machine_rank in the config file, so the launcher has no node "
         "rank to give torch.distributed.",
         "Pass --machine_rank to accelerate launch on every node (0 on the main node, 1, 2, ... on the others; under "
         "a scheduler its node index, e.g. the task's rank), or set machine_rank in each node's config file; "
         "--main_process_ip and --main_process_port as well.", retry=False),
    # transformers' TrainingArguments.__post_init__ (training_args.py): `self.fsdp = [FSDPOption(s) for s in
    # self.fsdp.split()]`, FSDPOption an ExplicitEnum whose _missing_ says "{value} is not a valid FSDPOption, please
    # select one of [...]" (a plain Enum's "'x' is not a valid FSDPOption" before), and its checks of the list: "`--fsdp
    # offload` can't work on its own. It needs to be added to `--fsdp full_shard` or `--fsdp shard_grad_op`", "`--fsdp
    # full_shard` is not compatible with `--fsdp shard_grad_op`".
    _sig("hf-fsdp-option", r"is not a valid FSDPOption\b|`?--fsdp offload`? can't work on its own|"
         r"`?--fsdp full_shard`? is not compatible with `?--fsdp shard_grad_op",
         "transformers' TrainingArguments refused its fsdp argument (--fsdp, or fsdp= of TrainingArguments or a TRL "
         "config): it takes a space-separated list of FSDPOption words (full_shard, shard_grad_op, no_shard, "
         "hybrid_shard, hybrid_shard_zero2, offload, auto_wrap), offload only beside a sharding strategy and one "
         "strategy at a time; any other word (fsdp2, a framework's own preset name) is refused. The FSDP version and "
         "FSDP's other settings go in fsdp_config.",
         "Pass FSDPOption words only (--fsdp \"full_shard auto_wrap\", offload added beside full_shard or "
         "shard_grad_op); for FSDP2 set version 2 in fsdp_config (fsdp_config={'version': 2}, or its JSON file) or "
         "fsdp_version: 2 in the accelerate config; a framework that passes its own preset name (ms-swift's --fsdp "
         "fsdp2) needs a release of it that knows the name. A restart fails the same way.", retry=False),
    # accelerate's commands/config/config_args.py (BaseConfig.from_json_file / from_yaml_file): "The config file at
    # {file} had unknown keys ({extra_keys}), please try upgrading your `accelerate` version or fix (and potentially
    # remove) these keys from your config file."
    _sig("accelerate-config", r"The config file at (?:(?!The config file at )[^\n]){1,400}? had unknown keys \(",
         "accelerate refused its config file (the default_config.yaml that `accelerate config` writes, or "
         "--config_file) for keys this accelerate does not know: most often a file written by a newer accelerate "
         "(enable_cpu_affinity, fsdp_version, ...) read by an older one (a version pinned by the project's "
         "requirements, or another node's environment), else a misspelt or misplaced key.",
         "Upgrade accelerate to the version that wrote the file (pip install -U accelerate, the same on every node), "
         "or remove the keys the message lists from the file (or write it again with this version's `accelerate "
         "config`). A restart fails the same way.", retry=False),
    # accelerate's Accelerator.prepare (accelerator.py) with FSDP2: "When using FSDP2, a model and optimizer must be
    # passed together to `Accelerator.prepare()` as the optimizer needs to have its parameters modified after the model
    # is converted."; its first wording (huggingface/accelerate#3394, 1.6.0): "With FSDP2, you need to pass model and
    # optimizer to a single `Accelerator.prepare()` call."
    _sig("fsdp2-prepare-optimizer", r"When using FSDP2, a model and optimizer must be passed together to|"
         r"With FSDP2, you need to pass model and optimizer to a single",
         "accelerate with FSDP2 (fsdp_version 2) was given the optimizer without its model (or the model without its "
         "optimizer) in an Accelerator.prepare() call: FSDP2 turns the model's parameters into sharded DTensors, so "
         "accelerate must swap the optimizer's parameters in the same call. Code that prepares them one after the "
         "other (the model first, as FSDP1 allowed; a transformers Trainer version doing so under FSDP2 with tensor "
         "parallelism) is refused.",
         "Create the optimizer from the unwrapped model and prepare both in one call: model, optimizer = "
         "accelerator.prepare(model, optimizer) (data loaders and scheduler may join it); with the HF Trainer, upgrade "
         "transformers to a release that prepares them together under FSDP2, or use fsdp_version 1 until then. A "
         "restart fails the same way.", retry=False),
    # accelerate's Accelerator.prepare_model for DDP (accelerator.py, since huggingface/accelerate#3629): "Your model
    # contains `DTensor` parameters, which is incompatible with DDP. Maybe you loaded your model with
    # `device_map='auto'`?"; before it, DDP's own broadcast of the parameters (torch's _sync_module_states ->
    # c10d.broadcast_) failed in DTensor's dispatch (torch/distributed/tensor: `assert mesh is not None, f"found no
    # DeviceMesh from dtensor args for {op_call}!"`). Only that op: other ops' missing mesh are other faults. Review 63:
    # the same assert is raised by a broadcast of a state dict into an FSDP2 (fully_shard) model, which has DTensor
    # parameters on purpose: torch's set_model_state_dict(broadcast_from_rank0=True) (_state_dict_utils.py's
    # _broadcast_state_dict / _broadcast_tensors; pytorch/pytorch#164843, a DTensor dispatch bug, PR #164841) and
    # accelerate's FSDP2 loading of a full state dict (fsdp2_load_full_state_dict): not DDP, and loading the model on
    # each rank's GPU would not help. With such a frame in the traceback the assert is not read (the block starts at
    # its traceback, so the frames stand before the assert; a bare assert line, as posted, is still DDP's).
    _sig("dtensor-ddp", r"Your model contains `?DTensor`? parameters, which is incompatible with DDP|"
         r"\A(?:(?!\bin (?:_broadcast_state_dict|_broadcast_tensors|set_model_state_dict|set_state_dict|"
         r"fsdp2_load_full_state_dict)\b)[\s\S])*?"
         r"found no DeviceMesh from dtensor args for c10d\.broadcast_\.default",
         "A broadcast of the model's parameters to every rank met DTensor parameters: the model was already sharded "
         "or tensor-parallel when it was wrapped for data parallelism (DDP), most often because transformers applied "
         "tensor parallelism to a model loaded with device_map='auto' (or tp_plan='auto') under torchrun or "
         "accelerate launch, as its 2025 releases did before huggingface/transformers#38942.",
         "For data parallelism load the whole model on each rank's own GPU: device_map={'': local_rank} (or 'cuda' "
         "after torch.cuda.set_device), not 'auto' and no tp_plan; or upgrade transformers to a release where "
         "device_map='auto' no longer turns on tensor parallelism. To shard the model use FSDP2 or tensor parallelism "
         "without DDP (accelerate's parallelism_config). A restart fails the same way.", retry=False),
    # accelerate 0.5-0.6's Accelerator.mixed_precision property (accelerator.py, v0.6.2 line 240): `if
    # self.state.deepspeed_plugin.deepspeed_config["fp16"]["enabled"]:`, then `elif ...["bf16"]["enabled"]:`; the
    # DeepSpeed config accelerate builds from an `accelerate config` file without mixed precision has no such section.
    # huggingface/accelerate#308 (0.7.0) reads both with .get(). The frame and its quoted line are accelerate's own: a
    # script's read of the same key (diffusers' examples before their `"fp16" in ...` guard) is another frame.
    _sig("accelerate-ds-fp16-key", r"in mixed_precision\n(?:\[rank\d+\]:)?[ \t]+(?:el)?if self\.state\.deepspeed_plugin\."
         r"deepspeed_config\[\"(?:fp16|bf16)\"\]\[\"enabled\"\]:\n(?:\[rank\d+\]:)?[ \t]*KeyError: '(?:fp16|bf16)'",
         "accelerate 0.5-0.6 (Accelerator.mixed_precision) read the fp16 and bf16 sections of the DeepSpeed config it "
         "built from the accelerate config file, and that config has no such section when the file sets no mixed "
         "precision: the property fails with KeyError before training starts. A bug of those releases.",
         "Upgrade accelerate (0.7.0 and later read the sections with a default), the same version on every node; with "
         "that old accelerate, add \"fp16\": {\"enabled\": false} and \"bf16\": {\"enabled\": false} to the DeepSpeed "
         "config or choose a mixed precision in `accelerate config`. A restart fails the same way.", retry=False),
)
