"""Failure signatures of Hugging Face's training stack in its own words (round 25 of issue 45): the Trainer refusing a
model loaded before ZeRO-3 was in effect, and accelerate's launcher given several machines but no rank for this one;
round 49: TrainingArguments refusing an fsdp word, accelerate refusing its config file's unknown keys, FSDP2's
prepare() given the optimizer alone, DDP given a model with DTensor parameters; round 57: accelerate 0.5-0.6 reading a
DeepSpeed config section its own generated config lacks; round 93: accelerate's notebook_launcher called without
the number of processes; round 101: the Hub's 429 when every rank asks it for the same files (HUB_RATE_LIMITED, which
sigmessages.py places before hub-unreachable); round 128: accelerate 0.33 and older refusing mixed precision fp8 under
FSDP; round 137: accelerate 1.2 reading a bitsandbytes optimizer's optim_bits where DeepSpeed offloads it; round 139:
ZeRO's "auto" bucket sizes for a model config without hidden_size, accelerate's DummyOptim stepped with no DeepSpeed
engine to replace it; round 140: the Trainer's evaluation or prediction refused DeepSpeed inference below ZeRO
stage 3.
Each pattern is the wording of the code that prints it (transformers' trainer.py, accelerate's utils/launch.py), never
one log's; `retry=False` throughout: the same command meets the same check again. sigmessages.py places this table
after the other frameworks'. The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature, then
from dscluster.sigtypes import sig as _sig

# The Hugging Face Hub refusing requests for their number (HTTP 429), round 101: every rank of a run (every node's)
# asking the Hub for the same files at start. In the words of the code that prints it, each about the Hub's own host:
# requests' HTTPError as huggingface_hub (< 1.0) and transformers raise it ("429 Client Error: Too Many Requests for
# url: URL"); huggingface_hub's hf_raise_for_status today (utils/_http.py: "429 Too Many Requests for url: URL.",
# "429 Too Many Requests: you have reached your 'api' rate limit."); its http_backoff's warnings (_http.py: "HTTP
# Error 429 thrown while requesting GET URL", "Rate limited. Waiting 207.0s before retry [Retry 1/5]."); the Rust
# hf-hub/reqwest wording ("HTTP status client error (429 Too Many Requests) for url (URL)"); urllib3's retries
# ("HTTPSConnectionPool(host='huggingface.co', ...): Max retries exceeded ... too many 429 error responses").
# sigmessages.py places it before hub-unreachable: transformers wraps the 429 in "We couldn't connect to ...".
_HUB = r"https?://(?:[\w-]+\.){0,3}(?:huggingface\.co|hf\.co|hf-mirror\.com)\b"
# Review 108: not where the text shows the 429 answering an upload (huggingface_hub's lfs.py POST to the repository's
# .git/info/lfs/objects/batch, _commit_api.py's POST to /preupload/ and /commit/: a push_to_hub or upload_large_folder
# whose parallel workers met the limit, "28 pre-upload workers all hit 429 in parallel"), which no download beforehand
# and no offline mode avoids.
_UPLOAD_429 = then(r"\b429\b", _HUB + r"/[^\s'\")]*?(?:\.git/info/lfs/objects/batch|/preupload/|/commit/)")
HUB_RATE_LIMITED = _sig(
    "hub-rate-limited",
    r"\A(?![\s\S]*?" + _UPLOAD_429 + r")[\s\S]*?(?P<ev>"
    r"\b429 (?:Client Error: )?Too Many Requests for url: " + _HUB + r"|"
    r"\b429 Too Many Requests: you have reached your '[\w-]+' rate limit|"
    r"HTTP Error 429 thrown while requesting [A-Z]+ " + _HUB + r"|"
    r"\bRate limited\. Waiting [\d.]+s before retry \[Retry \d+/\d+\]|"
    r"HTTP status client error \(429 Too Many Requests\) for url \(" + _HUB + r"|"
    + then(r"host='(?:[\w-]+\.){0,3}(?:huggingface\.co|hf\.co|hf-mirror\.com)'", r"too many 429 error responses") + ")",
    "The Hugging Face Hub refused this node's requests for their number (HTTP 429 Too Many Requests): every rank, on "
    "every node, asked the Hub for the same model, tokenizer, dataset or kernel files at start, and together (with "
    "no token the limit is lower) they went over the Hub's rate limit.",
    "Download the files once before the launch (huggingface-cli download NAME, or rank 0 first and the others after a "
    "barrier) onto storage every node sees (HF_HOME), then run every rank with HF_HUB_OFFLINE=1 (HF_DATASETS_OFFLINE=1 "
    "for datasets) or load them by path; give every rank a token (HF_TOKEN) for a higher limit, and a recent "
    "huggingface_hub (0.23.1 made far fewer paths-info calls). A restart at once meets the limit again.", retry=False)

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
    # Review 73, accelerate's own refusals read from its source (huggingface/accelerate, utils/dataclasses.py
    # DeepSpeedPlugin.fill_match, 0.15 to today): a DeepSpeed config value "auto" that accelerate cannot fill, since
    # only what prepare() is given fills it (a dataloader: the batch sizes; DummyOptim/DummyScheduler: optimizer.params.*,
    # scheduler.params.*; model.config: the hidden-size buckets); the HF Trainer fills more. 0.15-0.2x: "without `auto`(set".
    _sig("accelerate-ds-auto-value", r"`[\w.]{1,120}` not found in kwargs\. Please specify `[\w.]{1,120}` without `auto`",
         "accelerate refused a DeepSpeed config value set to \"auto\" that it cannot fill: without the HF Trainer, "
         "accelerate fills \"auto\" only from what Accelerator.prepare() is given (the batch sizes from a dataloader, "
         "optimizer.params.* and scheduler.params.* from accelerate's DummyOptim/DummyScheduler, the ZeRO bucket sizes "
         "from model.config); the key the message names got no value: a DeepSpeed config written for the HF Trainer "
         "used with a plain accelerate script.",
         "Replace \"auto\" for the named key with a number in the DeepSpeed config file (lr, weight_decay, warmup and "
         "step counts for an optimizer or scheduler section), or, with optimizer/scheduler sections in the config, "
         "pass accelerate.utils.DummyOptim(params, lr=...) and DummyScheduler(...) to prepare(). A restart fails the "
         "same way.", retry=False),
    # DeepSpeedPlugin.set_mixed_precision (utils/dataclasses.py, 0.2x to today): the launch's mixed precision and the
    # other half-precision section enabled in the DeepSpeed config file. Round 107: under the HF Trainer the launch's
    # precision is the training arguments' (TrainingArguments sets ACCELERATE_MIXED_PRECISION from bf16/fp16; before
    # huggingface/transformers#39856 even a default bf16 of TRL's SFTConfig over a config enabling fp16).
    _sig("accelerate-ds-mixed-precision", r"`--mixed_precision` arg cannot be set to `\w+` when `\w+` is set in the "
         r"DeepSpeed config",
         "accelerate was launched with one mixed precision (--mixed_precision, mixed_precision in the accelerate "
         "config, or the HF Trainer's bf16/fp16 training arguments, which transformers hands to accelerate; recent "
         "TRL configs turn bf16 on by default) while the DeepSpeed config file enables the other one (fp16 against "
         "bf16): DeepSpeed can run only one, and accelerate refuses to choose.",
         "Make them agree: the same precision in --mixed_precision / the accelerate config / the training arguments "
         "(--bf16 or --fp16, bf16=False when the config's default is on) and in the DeepSpeed file (or \"enabled\": "
         "\"auto\" there so accelerate sets it), or --mixed_precision no and let the DeepSpeed file decide. A restart "
         "fails the same way.", retry=False),
    # DeepSpeedPlugin.__post_init__ (utils/dataclasses.py, 0.15 to today): a deepspeed_config_file without
    # "zero_optimization".
    _sig("accelerate-ds-no-zero", r"Please specify the ZeRO optimization config in the DeepSpeed config",
         "accelerate was given a DeepSpeed config file (deepspeed_config_file, or a DeepSpeedPlugin's hf_ds_config) "
         "without a zero_optimization section, which accelerate requires to know the ZeRO stage.",
         "Add a \"zero_optimization\": {\"stage\": N, ...} section to the DeepSpeed config file (stage 0 for none), or "
         "check that the file given is the DeepSpeed config and not another JSON. A restart fails the same way.",
         retry=False),
    # Accelerator._prepare_deepspeed (accelerator.py, 0.15 to today): an optimizer or scheduler both in the DeepSpeed
    # config and in the code, or accelerate's placeholders (DummyOptim/DummyScheduler) without the config's section.
    _sig("accelerate-ds-optimizer-source", r"You cannot specify an? (?:optimizer|scheduler) in the config file and in "
         r"the code at the same time|You cannot create a `?DummyOptim`? without specifying an optimizer in the config|"
         r"Either specify a scheduler in the config file or pass in the `?lr_scheduler_callable|You can only specify "
         r"`?accelerate\.utils\.DummyScheduler`? in the code when using `?accelerate\.utils\.DummyOptim",
         "Under DeepSpeed accelerate takes the optimizer and the scheduler from one place each: the DeepSpeed config's "
         "optimizer/scheduler sections (with DummyOptim/DummyScheduler as placeholders in the code) or real torch "
         "objects in the code; this run gave both (a section in the config and a torch optimizer/scheduler in the "
         "code) or a placeholder with no section behind it.",
         "Either remove the optimizer (or scheduler) section from the DeepSpeed config and keep the code's, or keep "
         "the section and pass accelerate.utils.DummyOptim / DummyScheduler to prepare(); a DummyScheduler needs "
         "DummyOptim, and a scheduler section or lr_scheduler_callable. A restart fails the same way.", retry=False),
    # Accelerator.get_state_dict (accelerator.py, 0.15 to today): saving the full model under ZeRO-3 (save_model, the HF
    # Trainer's save) when the config does not gather the 16-bit weights.
    _sig("accelerate-zero3-16bit-save", r"Cannot get 16bit model weights because `?"
         r"stage3_gather_16bit_weights_on_model_save`? in DeepSpeed config is False",
         "Saving the model under DeepSpeed ZeRO-3 needs its whole weights, gathered from every rank's partitions, and "
         "the DeepSpeed config has stage3_gather_16bit_weights_on_model_save false (or unset), so accelerate refused "
         "to gather them.",
         "Set \"stage3_gather_16bit_weights_on_model_save\": true in zero_optimization (zero3_save_16bit_model: true "
         "in the accelerate config); or save DeepSpeed's own checkpoint (save_state / model.save_checkpoint) and "
         "recover the weights with zero_to_fp32.py. A restart fails the same way at the save.", retry=False),
    # Round 135 (huggingface/trl#2885): accelerate's get_state_dict (accelerator.py: `if model.
    # zero_gather_16bit_weights_on_model_save():` under ZeRO-3) and the HF Trainer's DeepSpeed save call a method only
    # DeepSpeed's engine has; given the bare module (torch's Module.__getattr__: "'Qwen2ForCausalLM' object has no
    # attribute ...", TRL's PPO trainers' save_model repointing self.deepspeed at the policy) or None, it is missing.
    # Never the engine itself lacking it (a DeepSpeed before the method's name: another release, not this).
    _sig("zero3-save-unwrapped-model", r"AttributeError: '(?!DeepSpeedEngine')\w+' object has no attribute "
         r"'zero_gather_16bit_weights_on_model_save'",
         "Saving under DeepSpeed ZeRO-3 asks the DeepSpeed engine to gather the 16-bit weights "
         "(zero_gather_16bit_weights_on_model_save), and the save path was handed something else: the bare model "
         "unwrapped from the engine, or None. TRL's PPO/PPOv2 trainers do this in save_model (they swap the policy in "
         "for the engine before calling the Trainer's save); a script that passes the unwrapped model to "
         "accelerator.get_state_dict does the same. Not the stage3_gather_16bit_weights_on_model_save setting.",
         "Pass the engine to the save: accelerator.get_state_dict(engine) with the model accelerator.prepare returned "
         "(the Trainer's self.model_wrapped / self.deepspeed), then save the unwrapped model with that state_dict "
         "(save_pretrained(dir, state_dict=...)); with TRL's PPO trainer (its save_model still swaps the policy in), "
         "override save_model to gather through the engine first, or train with ZeRO-2, whose save does not call it. A restart "
         "fails the same way at the save.", retry=False),
    # Accelerator.prepare (accelerator.py, 0.15 to today): under DeepSpeed one prepare() call given two models.
    _sig("accelerate-ds-one-model", r"You can't use same `?Accelerator\(\)`? instance with multiple models when using "
         r"DeepSpeed",
         "accelerate under DeepSpeed wraps one model in one engine per prepare(), and this call was given two "
         "torch.nn.Module objects (a policy and a reference, reward or teacher model, a generator and a "
         "discriminator).",
         "Prepare one model per call: model, optimizer, loader = accelerator.prepare(model, optimizer, loader); a "
         "second model that is only evaluated needs no prepare (move it to accelerator.device), one to train needs "
         "its own DeepSpeed engine (accelerate's several deepspeed_plugins, one selected per prepare, in 1.1 and "
         "later). A restart fails the same way.", retry=False),
    # PartialState.__init__ (state.py): started under MPI (its OMPI/PMI/MV2 rank variables) across several nodes,
    # local world size below the world size, without MASTER_ADDR (MASTER_PORT defaults to 29500).
    _sig("accelerate-mpi-master-addr", r"Tried to launch on distributed with multinode, but `?MASTER_ADDR`? env was not "
         r"set",
         "accelerate found itself started by an MPI launcher (mpiexec, its rank variables) across several nodes, "
         "and MASTER_ADDR is not set: torch.distributed needs the address of rank 0's node to meet, and the MPI "
         "launcher does not give it.",
         "Export MASTER_ADDR=<rank 0's hostname or IP> (and MASTER_PORT) to every rank: the MPI launcher's "
         "environment option (-x MASTER_ADDR=... -x MASTER_PORT=... with Open MPI's, -genv with Intel MPI's), or in "
         "the job script before it; or start the ranks with accelerate launch / torchrun on each node instead. A "
         "restart fails the same way.", retry=False),
    # utils/launch.py prepare_multi_gpu_env (0.2x to today) and utils/fsdp_utils.py (the FSDP1 wrap, 0.2x):
    # cpu_ram_efficient_loading loads the weights on rank 0 only, the others hold empty ones until sync_module_states
    # broadcasts rank 0's.
    _sig("accelerate-fsdp-sync-states", r"When using `?--fsdp_cpu_ram_efficient_loading`? set `?"
         r"--fsdp_sync_module_states`? to `?True|Set the `?sync_module_states`? flag to `?True`? so that model states "
         r"are synced across processes",
         "FSDP's cpu_ram_efficient_loading loads the pretrained weights on the main process only, the others create "
         "the model empty, so FSDP must broadcast rank 0's weights when it wraps the model (sync_module_states), and "
         "it is off.",
         "Set fsdp_sync_module_states: true in the accelerate config (--fsdp_sync_module_states true), or turn "
         "fsdp_cpu_ram_efficient_loading off. A restart fails the same way.", retry=False),
    # FullyShardedDataParallelPlugin.__post_init__ / set_state_dict_type (utils/dataclasses.py, 1.6 to today): FSDP1's
    # settings given to FSDP2 (fsdp_version: 2): LOCAL_STATE_DICT, reshard_after_forward as a sharding-strategy word,
    # forward_prefetch.
    _sig("accelerate-fsdp2-setting", r"FSDP2 does not support LOCAL_STATE_DICT|reshard_after_forward set to "
         r"[^\n]{1,80}?\. This is not supported with FSDP2, please set to a `?bool|forward_prefetch is not yet "
         r"implemented in FSDP2",
         "accelerate's FSDP2 (fsdp_version: 2) was given a setting only FSDP1 has: fsdp_state_dict_type "
         "LOCAL_STATE_DICT, fsdp_reshard_after_forward as a sharding strategy (FULL_SHARD, SHARD_GRAD_OP...) where "
         "FSDP2 takes true/false, or fsdp_forward_prefetch: an FSDP1 config with its version changed to 2.",
         "Convert the config to FSDP2 (`accelerate to-fsdp2 --config_file ...` writes one): fsdp_state_dict_type "
         "SHARDED_STATE_DICT or FULL_STATE_DICT, fsdp_reshard_after_forward true/false, no fsdp_forward_prefetch; "
         "or keep fsdp_version: 1. A restart fails the same way.", retry=False),
    # Round 128: FullyShardedDataParallelPlugin.set_mixed_precision (utils/dataclasses.py, 0.11 to 0.33, called by
    # AcceleratorState for the launch's mixed precision) maps only fp16/bf16 (later fp32 too) to FSDP's MixedPrecision
    # and raises `ValueError(f"Unknown mixed precision value: {mixed_precision}")` for anything else; FP8 under FSDP
    # (TransformerEngine) came with huggingface/accelerate#2983, released in 0.34.0, which dropped the refusal. Only
    # fp8: another word (a typo) is the config's own mistake.
    _sig("accelerate-fsdp-fp8-unsupported", r"Unknown mixed precision value: fp8\b",
         "accelerate was launched with mixed_precision fp8 under FSDP, and this accelerate (0.33 or older) has no FP8 "
         "with FSDP: its FSDP plugin takes only fp16 and bf16 and refuses fp8 before training starts.",
         "Upgrade accelerate to 0.34 or later (FP8 with FSDP through TransformerEngine, which must be installed, on "
         "GPUs with FP8: compute capability 8.9+), the same version on every node; or train under FSDP with "
         "mixed_precision bf16. A restart fails the same way.", retry=False),
    # Accelerator.clip_grad_value_ (accelerator.py, 0.1x to today): DeepSpeed and FSDP clip by norm only.
    _sig("accelerate-clip-grad-value", r"DeepSpeed and FSDP\s+do not support `?clip_grad_value_",
         "The training code clips gradients by value (accelerator.clip_grad_value_), which accelerate refuses under "
         "DeepSpeed and FSDP: their sharded gradients are clipped by norm only.",
         "Use accelerator.clip_grad_norm_(model.parameters(), max_norm) (with DeepSpeed, gradient_clipping in its "
         "config), or run without DeepSpeed/FSDP. A restart fails the same way.", retry=False),
    # commands/launch.py _validate_launch_command (0.2x to today): --multi_gpu with --num_processes below 2.
    _sig("accelerate-multi-gpu-one", r"You need to use at least 2 processes to use `?--multi_gpu",
         "accelerate launch was asked for multi-GPU data parallelism (--multi_gpu, or distributed_type MULTI_GPU in "
         "the config) with --num_processes 1 (or num_processes: 1 in the config).",
         "Give --num_processes the number of GPUs to use (2 or more; the total over all machines), or drop "
         "--multi_gpu (and set distributed_type NO) for one process. A restart fails the same way.", retry=False),
    # Round 137: accelerate 1.2's utils/deepspeed.py map_pytorch_optim_to_deepspeed (Accelerator._prepare_deepspeed
    # calls it when the DeepSpeed config offloads the optimizer, to swap in DeepSpeed's CPU optimizer;
    # huggingface/accelerate#3255) read `optimizer.optim_bits == 32` of bitsandbytes' AdamW/Adagrad/Lion, which keep it
    # in `args.optim_bits`: AttributeError "'AdamW' object has no attribute 'optim_bits'" ('Adagrad', 'Lion', ...; the
    # HF Trainer's adamw_bnb_8bit and paged optimizers are bitsandbytes' AdamW too). Fixed by #3311 (1.3.0: falls back
    # to optimizer.args.optim_bits); other code reads only `args.optim_bits` (bitsandbytes' own). Only the classes
    # that function checks (bitsandbytes.optim's AdamW, Adagrad, Lion and their 32bit ones).
    _sig("accelerate-bnb-optim-bits", r"'(?:AdamW|Adagrad|Lion)(?:32bit)?' object has no attribute 'optim_bits'",
         "accelerate 1.2 (its map_pytorch_optim_to_deepspeed, run when the DeepSpeed config offloads the optimizer to "
         "the CPU, to put DeepSpeed's CPU optimizer in its place) read the optim_bits attribute of a bitsandbytes "
         "optimizer (AdamW, Adagrad, Lion, 8-bit or paged), which bitsandbytes keeps in optimizer.args.optim_bits: "
         "every rank fails before training, a bug of that accelerate release.",
         "Upgrade accelerate to 1.3.0 or later (huggingface/accelerate#3311), the same on every node; or, with the "
         "optimizer offloaded, choose a torch optimizer (adamw_torch) or the DeepSpeed config's own \"optimizer\" "
         "section, since DeepSpeed's CPU optimizer replaces it anyway. A restart fails the same way.", retry=False),
    # Round 140: transformers' deepspeed_init (integrations/deepspeed.py, and optimum-habana's copy of it), called by
    # the Trainer's evaluation_loop/predict with inference=True: `if not hf_deepspeed_config.is_zero3(): raise
    # ValueError("ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your config")`. Its tail is read:
    # other trainers log the first sentence alone as a warning and go on.
    _sig("zero-inference-needs-stage3", r"ZeRO inference only makes sense with ZeRO Stage 3 - please adjust your "
         r"config",
         "The HF Trainer's evaluation or prediction started DeepSpeed for inference (transformers' deepspeed_init "
         "with inference=True: trainer.predict or evaluate run before training, or a framework's predict step), and "
         "transformers allows that only with ZeRO stage 3: the DeepSpeed config is stage 0, 1 or 2, whose partitions "
         "are the optimizer states and gradients that inference does not have.",
         "Give the run that evaluates or predicts a ZeRO stage 3 DeepSpeed config (zero_optimization.stage 3), or "
         "predict without DeepSpeed (no --deepspeed for that run: with stages 1 and 2 every GPU holds the whole "
         "model anyway, so plain multi-GPU data parallel inference does the same). A restart fails the same way.",
         retry=False),
    # launchers.py notebook_launcher (0.1 to today), off TPU and off a Colab with one GPU: `if num_processes is None:
    # raise ValueError("You have to specify the number of devices you would like to use, add `num_processes=...` to
    # your call.")` ("number of GPUs" before July 2025, `num_process=...` in the first release).
    _sig("notebook-launcher-num-processes", r"You have to specify the number of (?:GPUs|devices) you would like to "
         r"use, add `?num_process(?:es)?=",
         "accelerate's notebook_launcher was called without num_processes: outside a TPU and a Colab with one GPU it "
         "does not count the GPUs itself, so it refused to start.",
         "Pass the number of processes to start, one per GPU: notebook_launcher(training_function, args, "
         "num_processes=2) (a number: counting the GPUs with torch.cuda in a cell first can leave CUDA initialized "
         "in the kernel, which the forked processes then cannot use). A restart fails the same way.", retry=False),
    # Round 139: the ZeRO bucket sizes a DeepSpeed config leaves "auto" (reduce_bucket_size,
    # stage3_prefetch_bucket_size, stage3_param_persistence_threshold) filled from model.config.hidden_size or
    # max(hidden_sizes), and the model's top-level config has neither (a composite model: a vision-language model's size
    # in its text_config, an encoder-decoder's in its parts). transformers' integrations/deepspeed.py
    # HfTrainerDeepSpeedConfig.trainer_config_finalize (huggingface/transformers#21504 on): "The model's config file has
    # neither `hidden_size` nor `hidden_sizes` entry, therefore it's not possible to automatically fill out the
    # following `auto` entries in the DeepSpeed config file: [...]"; accelerate's Accelerator._prepare_deepspeed: "Can
    # find neither `model.config.hidden_size` nor `model.config.hidden_sizes`, therefore ..." and, for a model without
    # a config, "Can't find `model.config` entry, therefore it's not possible to automatically fill out ...".
    _sig("ds-auto-hidden-size-missing", r"(?:The model's config file has neither|Can find neither) "
         r"`(?:model\.config\.)?hidden_size` nor `(?:model\.config\.)?hidden_sizes`|Can't find `model\.config` entry, "
         r"therefore it's not possible to automatically fill out the following `auto` entries",
         "The DeepSpeed config leaves ZeRO's bucket sizes \"auto\" (reduce_bucket_size, stage3_prefetch_bucket_size, "
         "stage3_param_persistence_threshold); the HF Trainer and accelerate fill them from model.config.hidden_size "
         "(or hidden_sizes), and this model's top-level config has neither: a composite model (a vision-language "
         "model keeps its language model's size in text_config, an encoder-decoder in its parts) or a model without a "
         "config, so the launch stopped before training.",
         "Replace \"auto\" for those keys with numbers in the DeepSpeed config (with the language model's hidden size "
         "H: reduce_bucket_size H*H, stage3_prefetch_bucket_size 0.9*H*H, stage3_param_persistence_threshold 10*H), or "
         "use a transformers or training framework that reads the text model's size for such models "
         "(huggingface/transformers#33829). A restart fails the same way.", retry=False),
    # Round 139: accelerate's DummyOptim and DummyScheduler (utils/deepspeed.py) are placeholders with no methods
    # (__init__ keeps params, lr, weight_decay / optimizer, step counts and **kwargs): Accelerator._prepare_deepspeed
    # swaps them for the DeepSpeed engine's optimizer and scheduler, and the HF Trainer builds them whenever its
    # arguments carry a DeepSpeed config. Any attribute error on one (`'DummyOptim' object has no attribute 'step'`)
    # is a placeholder no DeepSpeed engine took over; accelerate's own refusals of them stay apart (sighf.py above,
    # "You cannot create a `DummyOptim` without specifying an optimizer in the config file").
    _sig("dummyoptim-step-no-deepspeed-engine", r"'Dummy(?:Optim|Scheduler)' object has no attribute '\w+'",
         "The training loop called accelerate's DummyOptim (or DummyScheduler), the placeholder that only a DeepSpeed "
         "engine replaces with its own optimizer: this process did not run under DeepSpeed although a DeepSpeed "
         "config made the Trainer build the placeholder (one plain process, e.g. a framework's DeepSpeed option used "
         "without its multi-GPU launch, or an accelerate launch without its DeepSpeed config), or the code kept the "
         "object it passed to accelerator.prepare() instead of the one prepare() returned.",
         "Launch with DeepSpeed in effect on every process: torchrun, the deepspeed launcher or accelerate launch with "
         "the DeepSpeed config (ms-swift: NPROC_PER_NODE=<GPUs> before swift sft; DeepSpeed needs the distributed "
         "launch), and use the optimizer and scheduler prepare() returns; to train one process without DeepSpeed, "
         "drop the DeepSpeed config so a torch optimizer is built. A restart fails the same way.", retry=False),
)
