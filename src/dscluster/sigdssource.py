"""DeepSpeed's own refusals read from its source before a log showed them (session 27 of issue 45, DeepSpeed at
edaa722, 2026-08): the messages deepspeed.initialize, the engine, its config, the pipeline engine, the launcher and
zero_to_fp32.py raise for a condition the code tests and a setting that satisfies it. Until these such a log got only a
generic answer (the exception's type, refused-*). Each pattern is the message's fixed words as the source formats them
(placeholders as bounded classes); `retry=False` throughout: the same config and code meet the same check again.
sigmessages.py places this table right after DEEPSPEED_SIGNATURES."""

from __future__ import annotations

from dscluster import sigcauses
from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# Round 142: deepspeed/comm/comm.py's collectives without its `DeepSpeed backend not set` assertion (all_reduce,
# inference_all_reduce, ...) return `cdb.<name>(...)` with the module's backend object `cdb` still None (no
# deepspeed.init_distributed() ran: DeepSpeedExamples#940, Domino's transformer before its example called it). Python
# prints that source line (a caret line under it in 3.11+, a rank prefix before each), then `AttributeError: 'NoneType'
# object has no attribute '<name>'`, the same name. Read with the lines before the error (sigmessages.READS_BEFORE): a
# pasted tail may begin at the source line. Each stretch bounded: linear time.
DS_COMM_UNSET = _sig(
    "ds-comm-not-initialized",
    r"\breturn cdb\.(?P<op>(?:all_|inference_all_|reduce|broadcast|barrier|monitored_barrier|gather|scatter|send|recv|"
    r"isend|irecv|get_|new_group|destroy_process_group)\w{0,40})\([^\n]{0,300}\n(?:[^\n^]{0,200}\^[\^~ \t]*\n)?"
    r"(?P<ev>[^\n]{0,200}AttributeError: 'NoneType' object has no attribute '(?P=op)')",
    *sigcauses.DS_COMM_NOT_INITIALIZED, retry=False)

DS_SOURCE_SIGNATURES: tuple[Signature, ...] = (
    DS_COMM_UNSET,
    # deepspeed/__init__.py initialize(): `assert config is not None, "DeepSpeed requires --deepspeed_config to specify
    # configuration file"` (no config= and no args.deepspeed_config).
    _sig("ds-no-config", r"DeepSpeed requires --deepspeed_config to specify configuration file",
         "deepspeed.initialize() was given no DeepSpeed config: neither config= (a path or a dict) nor an args "
         "namespace carrying deepspeed_config (the --deepspeed_config option that deepspeed.add_config_arguments adds).",
         "Pass the config to deepspeed.initialize(config=\"ds_config.json\" or a dict), or add "
         "deepspeed.add_config_arguments(parser) and launch with --deepspeed --deepspeed_config ds_config.json, passing "
         "args= to initialize. A restart fails the same way.", retry=False),
    # runtime/config.py DeepSpeedConfig._set_batch_related_parameters: none of train_batch_size and
    # train_micro_batch_size_per_gpu in the config.
    _sig("ds-batch-size-missing", r"Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided",
         "The DeepSpeed config gives neither train_batch_size nor train_micro_batch_size_per_gpu (at most "
         "gradient_accumulation_steps), so DeepSpeed cannot derive the batch sizes.",
         "Add train_micro_batch_size_per_gpu (and gradient_accumulation_steps) or train_batch_size to the config; "
         "with the HF Trainer or accelerate, \"auto\" values are filled only when they create the engine. A restart "
         "fails the same way.", retry=False),
    # runtime/config.py DeepSpeedConfig._batch_assertion: a batch value 0 or less, most often one DeepSpeed derived by
    # integer division in _set_batch_related_parameters (train_batch_size // world_size // gas).
    _sig("ds-batch-size-zero", r"(?:Train batch size|Micro batch size per gpu|Gradient accumulation steps): -?\d+ has "
         r"to be greater than 0",
         "A DeepSpeed batch setting is 0 or less: DeepSpeed derives the missing one by integer division "
         "(train_batch_size // world size // gradient_accumulation_steps, or train_batch_size // micro batch // world "
         "size), which gives 0 when train_batch_size is smaller than the product of the other two and the number of "
         "GPUs; or a 0 written in the config.",
         "Make train_batch_size = train_micro_batch_size_per_gpu x gradient_accumulation_steps x the number of GPUs "
         "(at least the world size), or set the micro batch and the accumulation steps and let DeepSpeed derive "
         "train_batch_size for this world size. A restart fails the same way.", retry=False),
    # runtime/engine.py _configure_optimizer: gradient clipping given to the optimizer's params in the config.
    _sig("ds-max-grad-norm", r"'max_grad_norm' is not supported as an optimizer parameter",
         "The DeepSpeed config's optimizer.params has max_grad_norm, which DeepSpeed does not pass to optimizers: "
         "gradient clipping is the engine's own setting.",
         "Remove max_grad_norm from optimizer.params and set \"gradient_clipping\": VALUE at the config's top level. "
         "A restart fails the same way.", retry=False),
    # runtime/engine.py backward()/step()/scale(): "must provide optimizer during init in order to use
    # backward|step|scale" (before 2021-11 the same words split in two literals; the pipeline engine's backward too).
    # Not _configure_zero_optimizer's "zero stage N requires an optimizer": a library preparing a second, frozen model
    # (TRL's reference model) with the training config meets it too, and there the fix is that library's (corpus case
    # trl-825-zero2-ref-model-optimizer); sigdeepspeed.py's ds-zero-requires-optimizer reads it, naming both.
    _sig("ds-no-optimizer", r"must provide optimizer during init in order to use (?:backward|step|scale)",
         "The DeepSpeed engine was created without an optimizer (no \"optimizer\" section in the config and none passed "
         "to deepspeed.initialize), and its backward() or step() needs one.",
         "Add an \"optimizer\" section to the config or pass optimizer= (or model_parameters=) to "
         "deepspeed.initialize; for inference only, call only the engine's forward (or use deepspeed.init_inference). A "
         "restart fails the same way.", retry=False),
    # runtime/engine.py _configure_optimizer: config optimizer.type not in DEEPSPEED_OPTIMIZERS nor torch.optim.
    _sig("ds-optimizer-unknown", r"\S{1,80} is not a supported DeepSpeed Optimizer",
         "The DeepSpeed config's optimizer.type names no optimizer DeepSpeed knows: neither one of its own (Adam, AdamW, "
         "Lamb, OneBitAdam, ZeroOneAdam, OneBitLamb, Lion, Muon, ...) nor a torch.optim class; the name is "
         "case-sensitive.",
         "Spell optimizer.type as DeepSpeed or torch.optim names it (\"AdamW\", \"Adam\", \"SGD\"), or build the "
         "optimizer in the script and pass it to deepspeed.initialize(optimizer=...). A restart fails the same way.",
         retry=False),
    # runtime/engine.py _scheduler_from_config: scheduler.type neither in deepspeed.runtime.lr_schedules nor torch's.
    _sig("ds-scheduler-unknown", r"DeepSpeed does not recognize LR scheduler \S",
         "The DeepSpeed config's scheduler.type names no scheduler DeepSpeed knows: neither one of its own (WarmupLR, "
         "WarmupDecayLR, WarmupCosineLR, OneCycle, LRRangeTest) nor a torch.optim.lr_scheduler class; the name is "
         "case-sensitive.",
         "Spell scheduler.type as DeepSpeed or torch names it (\"WarmupLR\", \"WarmupDecayLR\", \"CosineAnnealingLR\"), "
         "or pass the scheduler to deepspeed.initialize(lr_scheduler=...). A restart fails the same way.", retry=False),
    # runtime/engine.py _do_sanity_check: an optimizer class (a callable) with an already-built LR scheduler.
    _sig("ds-scheduler-without-optimizer", r"is not instantiated but Client LR Scheduler is instantiated",
         "deepspeed.initialize got an LR scheduler object built on an optimizer, but an optimizer class or factory "
         "(not an optimizer object) as optimizer=: a built scheduler needs the built optimizer it steps.",
         "Pass the optimizer object the scheduler was built with (optimizer=opt, lr_scheduler=sched), or pass a "
         "scheduler factory (a callable taking the optimizer) with the optimizer factory. A restart fails the same "
         "way.", retry=False),
    # runtime/engine.py _check_for_duplicates: one parameter in two param groups of the client optimizer.
    _sig("ds-param-in-two-groups", r"occurs multiple times in optimizer\.param_groups",
         "The optimizer given to DeepSpeed holds one parameter in more than one param group (a weight listed both in a "
         "weight-decay group and another, tied weights, or model.parameters() added again): ZeRO partitions each "
         "parameter once.",
         "Build the param groups so each parameter is in exactly one (filter by name, dedupe by id(p); for tied "
         "weights keep one). A restart fails the same way.", retry=False),
    # runtime/engine.py _configure_optimizer: amp (Apex) and any ZeRO stage.
    _sig("ds-amp-with-zero", r"Amp and ZeRO are not currently compatible",
         "The DeepSpeed config turns on both \"amp\" (NVIDIA Apex mixed precision) and ZeRO, which DeepSpeed does not "
         "run together.",
         "Turn \"amp\" off and use DeepSpeed's own \"fp16\" or \"bf16\" section with ZeRO (similar to amp O2), or drop "
         "ZeRO. A restart fails the same way.", retry=False),
    # runtime/engine.py _consolidated_16bit_state_dict / _zero3_consolidated_16bit_state_dict (save_16bit_model).
    _sig("ds-consolidate-not-partitioned", r"consolidated_16bit_state_dict is only applicable to cases where weights "
         r"are partitioned|this function requires ZeRO-3 mode",
         "A consolidated 16-bit state dict (save_16bit_model, stage3_gather_16bit_weights_on_model_save) was asked of "
         "an engine whose weights are not partitioned (ZeRO stage 0-2 without tensor parallelism): each rank already "
         "holds the whole model.",
         "Save the model's own state dict there (engine.module.state_dict(), or save_checkpoint); call "
         "save_16bit_model/_zero3_consolidated_16bit_state_dict only under ZeRO-3 or tensor parallelism. A restart "
         "fails the same way.", retry=False),
    # runtime/engine.py deepspeed_io (deepspeed.initialize(training_data=...)): neither map-style nor iterable dataset.
    _sig("ds-training-data-type", r"Training data must be a torch Dataset",
         "deepspeed.initialize(training_data=...) (the engine's deepspeed_io) got something that is not a torch "
         "Dataset: a DataLoader, a list or a dataset dictionary.",
         "Pass a torch.utils.data.Dataset (or IterableDataset) as training_data, or leave training_data out and "
         "iterate your own DataLoader. A restart fails the same way.", retry=False),
    # launcher/runner.py main: `ssh FIRST_HOST hostname -I` failed (logger.error, 'hostname -I') or printed no word
    # (RuntimeError, `hostname -I`).
    _sig("ds-master-addr-undetected", r"Unable to detect suitable master address via ['`]hostname -I['`]",
         "DeepSpeed's runner, given a hostfile and no --master_addr, asks the first host for its address with `ssh "
         "FIRST_HOST hostname -I`, and that command failed or printed nothing (ssh to it refused, or a hostname "
         "without -I there).",
         "Pass --master_addr with the first node's IP address (reachable from every node); check that `ssh FIRST_HOST "
         "hostname -I` runs without a password from this node. A restart fails the same way.", retry=False),
    # launcher/runner.py main: --no_ssh needs each node's own --node_rank, within the hostfile's nodes.
    _sig("ds-no-ssh-node-rank", r"Launching training without ssh, but --node_rank is not set correctly",
         "DeepSpeed's runner was started with --no_ssh (each node runs its own command) but without a --node_rank in "
         "range: each node must say which of the hostfile's nodes it is (0 to nodes-1).",
         "Run the same command on every node with --no_ssh --node_rank=N (0 on the first host of the hostfile, 1 on "
         "the next, ...), --master_addr and --master_port the same everywhere. A restart fails the same way.",
         retry=False),
    # runtime/pipe/module.py PipelineModule.__init__: num_stages without a topology must divide the world size.
    _sig("pipe-stages-world", r"num_stages \(\d+\) must divide distributed world size \(\d+\)",
         "The PipelineModule's num_stages does not divide the number of processes: DeepSpeed splits the world into "
         "world_size / num_stages data-parallel pipelines.",
         "Launch a multiple of num_stages processes (GPUs), or set num_stages to a divisor of the world size. A "
         "restart fails the same way.", retry=False),
    # runtime/pipe/engine.py PipelineEngine.forward/backward/step: disabled for pipeline training.
    _sig("pipe-train-batch-only", r"Only train_batch\(\) is accessible in pipeline mode",
         "The pipeline engine (a PipelineModule given to deepspeed.initialize) was driven with engine(batch), "
         "engine.backward() or engine.step(), which pipeline training disables: it runs a whole batch's schedule "
         "itself.",
         "Call loss = engine.train_batch(data_iter=...) for each training batch (engine.eval_batch for evaluation) "
         "instead of the forward/backward/step loop. A restart fails the same way.", retry=False),
    # runtime/pipe/engine.py PipelineEngine.train_batch under torch.no_grad().
    _sig("pipe-train-batch-no-grad", r"train_batch\(\) requires gradients enabled\. Use eval_batch\(\) instead",
         "The pipeline engine's train_batch() ran with gradients disabled (inside torch.no_grad() or "
         "torch.inference_mode(), an evaluation loop).",
         "Use engine.eval_batch(data_iter) for evaluation, and call train_batch outside no_grad. A restart fails the "
         "same way.", retry=False),
    # runtime/zero/partition_parameters.py GatheredParameters.__exit__: parameters changed with modifier_rank=None.
    _sig("zero3-gathered-modified", r"Detected in-place modification of ZeRO-3 parameters inside GatheredParameters "
         r"with modifier_rank=None",
         "Parameters gathered with deepspeed.zero.GatheredParameters(..., modifier_rank=None) were modified in place "
         "(weights initialized or loaded inside it): with modifier_rank=None the gather is read-only and the change "
         "would be lost when they are partitioned again.",
         "Pass modifier_rank=0 (the rank whose change is broadcast to all) to GatheredParameters where the block "
         "changes the weights. A restart fails the same way.", retry=False),
    # runtime/zero/partition_parameters.py Init._set_dtype: both "fp16" and "bf16" enabled in the config.
    _sig("ds-fp16-and-bf16", r"bfloat16 and fp16 cannot be enabled at once",
         "The DeepSpeed config enables both the \"fp16\" and the \"bf16\" section, and zero.Init refuses to choose the "
         "parameters' dtype.",
         "Enable only one of \"fp16\" and \"bf16\" (with the HF Trainer, match --bf16/--fp16 to the config or use "
         "\"auto\"). A restart fails the same way.", retry=False),
    # runtime/config.py DeepSpeedConfig._do_error_check: zero_optimization.stage above 3.
    _sig("ds-zero-stage-too-high", r"DeepSpeedConfig: Maximum supported ZeRO stage is \d",
         "The DeepSpeed config's zero_optimization.stage is above 3, the highest stage DeepSpeed has.",
         "Set zero_optimization.stage to 0, 1, 2 or 3 (ZeRO++ and offload are settings of stage 3, not stages). A "
         "restart fails the same way.", retry=False),
    # runtime/lr_schedules.py WarmupLR/WarmupDecayLR __init__ (2025+): f"warmup_num_steps must be a positive integer,
    # got {warmup_num_steps}" with the HF/accelerate placeholder "auto" left in place.
    _sig("ds-config-auto", r"warmup_num_steps must be a positive integer, got '?auto'?(?!\w)",
         "DeepSpeed's scheduler got the string \"auto\" as warmup_num_steps: the config keeps the HF Trainer's and "
         "Accelerate's \"auto\" placeholders, which only those two replace with numbers when they create the engine, "
         "and here DeepSpeed was given them as they are.",
         "Put a number in place of \"auto\" (warmup_num_steps, and the other \"auto\" values) when DeepSpeed gets the "
         "config directly, or let the HF Trainer or accelerate create the engine from it. A restart fails the same "
         "way.", retry=False),
    # utils/zero_to_fp32.py parse_optim_states: the number of *_optim_states.pt files is not the saved world size.
    _sig("zero-ckpt-incomplete", r"Expected \d+ of '\*_optim_states\.pt' under '[^'\n]{0,300}' but found \d+ files",
         "zero_to_fp32.py found another number of ZeRO optimizer-state files in the checkpoint's tag directory than "
         "the world size that saved it: a checkpoint written over an older one of another world size, or one not "
         "saved by every rank (a save interrupted, ranks writing to different disks).",
         "Convert a complete checkpoint: one tag directory written by one save of all ranks (on a shared file "
         "system, or collected from every node); delete stale zero_pp_rank_* files of another world size. A restart "
         "fails the same way.", retry=False),
    # Round 135 (deepspeedai/DeepSpeed#3089): utils/zero_to_fp32.py parse_optim_states before DeepSpeed 0.10.0 knew
    # only ZeRO-2's and ZeRO-3's optimizer-state keys (`if zero_stage == 2: ... elif zero_stage == 3: ... else: raise
    # ValueError(f"unknown zero stage {zero_stage}")`); deepspeedai/DeepSpeed#3936 (103884a, v0.10.0) reads a ZeRO-1
    # checkpoint as ZeRO-2's (`zero_stage <= 2`). Read from the message with stage 1, or from that raise's source line
    # (which a traceback quotes) when the text names no other stage: stage 0 is not this.
    _sig("package-too-old", r"\A(?![\s\S]*unknown zero stage (?!1\b)\d)[\s\S]*?(?P<ev>ValueError: unknown zero stage 1\b|"
         r"ValueError\(f[\"']unknown zero stage \{zero_stage\}[\"']\))",
         "zero_to_fp32.py refused the checkpoint's ZeRO stage: before DeepSpeed 0.10.0 the script converts only ZeRO-2 "
         "and ZeRO-3 checkpoints, and this one was saved with ZeRO stage 1 (whose optimizer-state layout is ZeRO-2's). "
         "The checkpoint is intact.",
         "Run the zero_to_fp32.py of DeepSpeed 0.10.0 or later (pip install -U deepspeed; python -m "
         "deepspeed.utils.zero_to_fp32 CHECKPOINT_DIR OUTPUT) instead of the older copy saved in the checkpoint "
         "directory; Lightning's convert_zero_checkpoint_to_fp32_state_dict uses the installed DeepSpeed's. A restart "
         "fails the same way.", retry=False),
    # Round 119: ZeRO-3's optimizer packs the partitions of the parameters it trains into one flat buffer
    # (stage3.py _create_fp16_partitions_with_defragmentation -> defragment, a static method of stage3.py until
    # DeepSpeed moved it to runtime/zero/utils.py): `assert len(set(t.dtype for t in tensors)) == 1`, DeepSpeed's
    # source line that a traceback quotes. Not its next line (the device assert) nor Init's get_only_unique_item.
    _sig("zero3-defragment-mixed-dtype", r"assert len\(set\(t\.dtype for t in tensors\)\) == 1",
         "DeepSpeed ZeRO-3's optimizer packs the partitions of every parameter it trains into one flat buffer of a "
         "single dtype and did not find exactly one: the model given to deepspeed.initialize has trainable "
         "parameters in different dtypes (modules kept or cast to float32 beside bf16/fp16 ones, e.g. a value head, "
         "norms, an added layer, or a training framework's own cast), or none at all (every parameter frozen, "
         "requires_grad=False, when deepspeed.initialize ran: a frozen reference model given the training config, "
         "adapters or a head unfrozen only after it).",
         "Give deepspeed.initialize a model in one dtype (load it with the torch_dtype of DeepSpeed's bf16/fp16 "
         "setting and do not upcast modules under ZeRO-3), update the training framework when its code makes the "
         "cast (LLaMA-Factory fixed its DPO path under ZeRO-3), or use ZeRO-2; unfreeze what trains before "
         "deepspeed.initialize, and give a model that does not train a config without an optimizer. A restart fails "
         "the same way.", retry=False),
    # Round 169: a PipelineModule built without loss_fn. PipelineEngine._exec_forward_pass (runtime/pipe/engine.py) then
    # keeps the last stage's outputs as self.loss, and _exec_backward_pass hands them to the engine's backward
    # (`super().backward(self.loss)`): DeepSpeed 0.18+ asserts maybe_loss_for_backward's "loss must be a scalar
    # tensor..." (ds-backward-not-loss's words, read here only under that pipeline frame), earlier releases reach
    # torch's autograd _make_grads: "grad can be implicitly created only for scalar outputs". Bounded: linear time.
    _sig("pipe-no-loss-fn", r"pipe[/\\]engine\.py\", line \d+, in _exec_backward_pass\n(?:[^\n]*\n){0,24}?"
         r"(?P<ev>[^\n]{0,80}?(?:\bloss must be a scalar tensor\b|grad can be implicitly created only for scalar "
         r"outputs)[^\n]*)",
         "The pipeline engine's last stage had no single-number loss to backpropagate: the PipelineModule was built "
         "without loss_fn, so DeepSpeed takes the last layer's output (a tensor of a whole batch) as the loss, or its "
         "loss_fn returns more than one number (reduction='none'). With pipeline parallelism the loss is computed "
         "inside the pipeline, by the module's loss_fn, not by the training loop.",
         "Pass loss_fn to PipelineModule (e.g. PipelineModule(layers=..., num_stages=..., loss_fn=torch.nn."
         "CrossEntropyLoss())), a callable (outputs, labels) returning one scalar, and let the data iterator yield "
         "(inputs, labels) pairs. A restart fails the same way.", retry=False),
    # Round 167: DeepSpeed 0.18+'s engine.backward (runtime/engine.py) asserts runtime/utils.py maybe_loss_for_backward
    # (a torch.Tensor, numel() == 1, grad_fn set): "loss must be a scalar tensor. If you need to pass output gradients,
    # backward() of output tensors"; engine.scale's: "loss must be a scalar tensor with grad_fn. For non-scalar tensors,
    # use tensor.backward(grad)". Both whole sentences: users' own checks say "... loss must be a scalar tensor" too.
    _sig("ds-backward-not-loss", r"\bloss must be a scalar tensor\. If you need to pass output gradients, backward\(\) "
         r"of output tensors|\bloss must be a scalar tensor with grad_fn\. For non-scalar tensors, use "
         r"tensor\.backward\(grad\)",
         "DeepSpeed's engine.backward was given something it cannot backpropagate: it takes one loss, a tensor of "
         "one element with a graph (grad_fn). Given instead: the model's whole output (a transformers ModelOutput, a "
         "tuple or a dict) rather than its loss; a per-sample or per-token loss not reduced to one number "
         "(reduction='none', a loss of shape [batch]); or a loss with no graph, computed from argmax, .item() or "
         ".detach() values, under torch.no_grad(), or from a model whose parameters are all frozen.",
         "Pass one scalar with a graph: outputs.loss (outputs[0]) of a model's output, loss.mean() or (loss * "
         "mask).sum() / mask.sum() of a per-element loss, and a loss computed from the logits (cross_entropy, not "
         "argmax) outside torch.no_grad(); print(type(loss), getattr(loss, 'shape', None), getattr(loss, 'grad_fn', "
         "None)) before engine.backward shows which. A restart fails the same way.", retry=False),
    # Round 188 (live): the ZeRO optimizer deepspeed.initialize returned stepped by the script itself (optimizer.step()
    # where engine.step() belongs), between accumulation boundaries: ZeRO-1/2/3 fill averaged_gradients only at the
    # boundary's reduction, so its step's first read of them is the same KeyError as below. Told apart by the frame
    # that called the optimizer's step: a call `X.step()` of another object than self (the engine's
    # _take_model_step is `self.optimizer.step()`), the very next frame being stage_1_and_2.py/stage3.py's step.
    _sig("ds-zero-optimizer-step-direct", r"(?<![\w.])(?!self\.)(?:\w+\.)+step\(\)[^\n]*\n(?:[^\n]*\n)?[^\n]*"
         r"zero[/\\]stage(?:_1_and_2|2|3)\.py\", line \d+, in step\n(?:[^\n]*\n){0,12}?[^\n]*"
         r"\bself\.averaged_gradients\[\w+\][^\n]*\n(?:(?:\[rank\d+\]: )?[ \t]*[~^][~^ \t]*\n)?"
         r"(?P<ev>(?:\[rank\d+\]: )?KeyError: \d+)",
         "The script stepped DeepSpeed's ZeRO optimizer itself (optimizer.step() on the optimizer deepspeed.initialize "
         "returned, as in a plain PyTorch loop) instead of engine.step(), when ZeRO had reduced no gradients into its "
         "partitions: between accumulation boundaries (with gradient_accumulation_steps above 1 ZeRO reduces them "
         "only at the boundary's engine.backward) or with no engine.backward(loss) before it.",
         "Call engine.backward(loss) and then engine.step() on every micro-batch, and drop the script's own "
         "optimizer.step() and optimizer.zero_grad(): the engine counts the micro-batches and steps the optimizer, "
         "zeroes the gradients and steps its lr scheduler at the boundary. A restart fails the same way.",
         retry=False),
    # Round 169: the engine's step with no gradient reduced into ZeRO's partitions since the last step (no
    # engine.backward(loss) ran): ZeRO-1/2's optimizer (runtime/zero/stage_1_and_2.py, stage2.py before 0.6) and
    # ZeRO-3's (stage3.py) index self.averaged_gradients[i], a dict filled only by the backward's reduction:
    # scaled_global_norm's get_grad_norm_direct (0.19), has_overflow_partitioned_grads_serial's enumerate (0.10,
    # deepspeedai/DeepSpeed#4397), step's flatten. KeyError of a group index right under such a source line only.
    _sig("ds-step-without-backward", r"zero[/\\]stage(?:_1_and_2|2|3)\.py\", line \d+, in \w+\n[^\n]*"
         r"\bself\.averaged_gradients\[\w+\][^\n]*\n(?:(?:\[rank\d+\]: )?[ \t]*[~^][~^ \t]*\n)?"
         r"(?P<ev>(?:\[rank\d+\]: )?KeyError: \d+)",
         "DeepSpeed's ZeRO optimizer stepped with no gradients reduced into its partitions: engine.step() ran "
         "without engine.backward(loss) before it (the backward forgotten, done with loss.backward() or on another "
         "model, or step called more often than backward), so the gradients it averages do not exist.",
         "Call engine.backward(loss) before every engine.step() (the engine deepspeed.initialize returned, once per "
         "micro-batch; DeepSpeed steps the optimizer itself at the accumulation boundary), and step only after a "
         "backward. A restart fails the same way.", retry=False),
    # Round 169: activation checkpointing's configure (runtime/activation_checkpointing/checkpointing.py): contiguous
    # memory checkpointing ("contiguous_memory_optimization" in the config, contiguous_checkpointing= in configure)
    # asserts partition_activations: "Contiguous Checkpointing is only available with partitioned activations. Set
    # partitioned activations to true in deepspeed config" (the same words since 0.3, Megatron's copies too).
    _sig("ds-contiguous-ckpt-no-partition", r"Contiguous Checkpointing is only available with partitioned "
         r"activations",
         "DeepSpeed's activation checkpointing was configured with contiguous memory checkpointing but without "
         "partitioned activations, and contiguous checkpointing works only on partitioned activations.",
         "Set \"partition_activations\": true with \"contiguous_memory_optimization\": true in the config's "
         "\"activation_checkpointing\" section (or partition_activations=True in deepspeed.checkpointing.configure, "
         "with num_checkpoints), or turn contiguous_memory_optimization off. A restart fails the same way.",
         retry=False),
    # Round 178 (live): DeepSpeed's "compile" section, read by runtime/config.py (self.compile_config =
    # CompileConfig(**param_dict.get('compile', {}))): compile/config.py's CompileConfig holds DeepCompile's settings
    # (deepcompile, offload_*, passes...) and, a DeepSpeedConfigModel, forbids other fields: pydantic 2's "N validation
    # errors for CompileConfig" / "<field>" / "Extra inputs are not permitted [type=extra_forbidden" (pydantic 1, through
    # deepspeed.pydantic_v1: "extra fields not permitted (type=value_error.extra)"). The fields runtime/compiler.py's
    # CompileConfig took in 0.14 (enabled, backend, kwargs; first backend, fullgraph, dynamic, mode, options, disable)
    # are the usual ones. Only extra fields:
    # a wrong value of a known field (passes) is another message.
    _sig("ds-compile-config-fields", r"validation errors? for CompileConfig\n(?:[^\n]{0,200}\n){0,40}?[^\n]{0,80}"
         r"(?:Extra inputs are not permitted|extra fields not permitted)",
         "The DeepSpeed config's \"compile\" section holds fields this DeepSpeed does not know: its CompileConfig takes "
         "DeepCompile's settings only (deepcompile, offload..., passes) and refuses any other. The torch.compile "
         "settings the section took in DeepSpeed 0.14's experimental version (enabled, backend, kwargs; before them "
         "backend, fullgraph, mode, options...) were removed when compiling moved to engine.compile(); otherwise a "
         "misspelled field.",
         "Remove the fields the error names from \"compile\" (keep it for DeepCompile: {\"deepcompile\": true}) and "
         "compile in the script: engine.compile(backend=\"inductor\", compile_kwargs={...}) after "
         "deepspeed.initialize. A restart fails the same way.", retry=False),
    # Round 187 (live): ZeRO-3's code reaching a parameter it never converted. deepspeed/runtime/zero/
    # partition_parameters.py (_convert_to_deepspeed_param) gives each parameter ds_id, ds_status, ds_tensor,
    # ds_numel, ds_shape, ds_active_sub_modules...; the coordinator and hooks (partitioned_param_coordinator.py
    # release_and_reset_all: `param.ds_active_sub_modules.clear()`, fetch_sub_module, parameter_offload.py) read them
    # on every parameter of the engine's module. A plain torch Parameter there ("'Parameter' object has no attribute
    # 'ds_active_sub_modules'", 'ds_id', 'ds_status', ...) was added after deepspeed.initialize: a new head or layer
    # assigned on engine.module, adapters injected later, a parameter created inside forward.
    _sig("zero3-param-not-registered", r"'(?:Parameter|Tensor)' object has no attribute '(?P<attr>ds_(?:id|status|"
         r"tensor|numel|shape|active_sub_modules|persist|process_group|secondary_tensor)\w*)'",
         "DeepSpeed ZeRO-3 met a parameter it never took over (a plain torch Parameter without its ds_* attributes): "
         "a layer or parameter was added to or replaced in the model after deepspeed.initialize (a new head assigned "
         "on engine.module, adapters such as LoRA injected later, a parameter created inside forward), so ZeRO-3 "
         "neither partitioned it nor gave it to the optimizer.",
         "Make every change to the model before deepspeed.initialize (new heads, resize_token_embeddings, "
         "get_peft_model), then initialize it and build the optimizer from the final parameters; create parameters "
         "in __init__, never in forward. A restart fails the same way.", retry=False),
    # Round 184: ZeRO-1/2's optimizer (runtime/zero/stage_1_and_2.py, DeepSpeedZeroOptimizer.__init__) keeps of each
    # param group only the parameters that require grad and takes the group's dtype from its first:
    # `param_dtype = self.bit16_groups[i][0].dtype` -> IndexError (0.19); releases before flatten the empty group:
    # flatten_dense_tensors_aligned -> torch.cat(): expected a non-empty list of Tensors (ssbuild/moss_finetuning#22).
    _sig("zero-group-no-trainable-params", r"stage_1_and_2\.py\"?, line \d+, in __init__\n[^\n]*?param_dtype = "
         r"self\.bit16_groups\[i\]\[0\]\.dtype\n(?:[^\n]*\n){0,3}?[^\n]*IndexError: list index out of range|"
         r"stage_1_and_2\.py\"?, line \d+, in flatten_dense_tensors_aligned\n(?:[^\n]*\n){0,12}?[^\n]*"
         r"expected a non-empty list of Tensors",
         "DeepSpeed ZeRO-1/2's optimizer was given a param group none of whose parameters requires a gradient: "
         "every parameter of the model frozen (a reference or teacher model passed through deepspeed.initialize "
         "with the training config's optimizer, adapters or a head not yet added or unfrozen), or one group of "
         "frozen parameters only (a no-decay group of frozen norms and biases, a group of a frozen module).",
         "Build the param groups from trainable parameters only (p.requires_grad in each group's filter) and drop "
         "a group left empty; unfreeze what trains before deepspeed.initialize; a model that does not train needs "
         "no optimizer: give it a config without \"optimizer\" (or no deepspeed.initialize at all). A restart fails "
         "the same way.", retry=False),
    # Round 184: ZeRO-1/2's checkpoint loader (stage_1_and_2.py _load_legacy_checkpoint, 0.19) compares the saved
    # per-parameter alignment paddings with the optimizer's; they differ when the checkpoint was saved with another
    # set of trainable parameters (some frozen then, unfrozen now, or adapters added) or shapes, not only another
    # zero_optimization.parameter_alignment, which its words name.
    _sig("zero-ckpt-trainable-set-changed", r"The ZeRO checkpoint parameter-alignment layout does not match the current",
         "The ZeRO checkpoint's optimizer state was saved for another layout of the trained parameters than this "
         "run's: the set of trainable parameters changed since it was saved (layers frozen then and unfrozen now, as "
         "in a second training stage, adapters added or merged, a param group changed) or their shapes, or "
         "zero_optimization.parameter_alignment changed, which is all DeepSpeed's message names.",
         "Resume the optimizer state only with the same trainable parameters and settings; to start a new stage "
         "from the weights, load the module alone: engine.load_checkpoint(dir, load_optimizer_states=False, "
         "load_lr_scheduler_states=False) or load_module_only=True (or load the saved weights into the model "
         "before deepspeed.initialize). A restart fails the same way.", retry=False),
    # Round 188 (live): runtime/engine.py step() asserts it is not inside engine.no_sync() (also what
    # coalesce_grad_reduction() sets while its block runs): "It is illegal to call Engine.step() inside no_sync
    # context manager" (the same words since DeepSpeed 0.14's no_sync).
    _sig("ds-step-inside-no-sync", r"It is illegal to call Engine\.step\(\) inside no_sync context manager",
         "engine.step() was called inside a `with engine.no_sync():` block (or inside engine.coalesce_grad_reduction(), "
         "which counts as one): DeepSpeed refuses to step while the gradient reduction is held back, since the "
         "gradients of the micro-batches in the block have not been reduced across the ranks yet.",
         "Call engine.step() after the with block, on the micro-batch that ends the accumulation; or drop the "
         "no_sync() block and set gradient_accumulation_steps in the ds_config, calling engine.backward(loss) and "
         "engine.step() on every micro-batch (DeepSpeed then reduces and steps only at the boundary). A restart "
         "fails the same way.", retry=False),
    # Round 188 (live): runtime/engine.py coalesce_grad_reduction() (DeepSpeed 0.19) coalesces ZeRO-1/2/3's reduction
    # over several backwards and raises NotImplementedError for an engine without ZeRO: "coalesce_grad_reduction
    # requires ZeRO stage 1/2/3, got stage 0".
    _sig("ds-coalesce-needs-zero", r"coalesce_grad_reduction requires ZeRO stage 1/2/3, got stage \d+",
         "engine.coalesce_grad_reduction() was used on a DeepSpeed engine without ZeRO (no zero_optimization in the "
         "ds_config, or stage 0): it coalesces only ZeRO stage 1, 2 or 3's gradient reduction.",
         "Set zero_optimization.stage to 1, 2 or 3 in the ds_config, or drop the with block: without ZeRO the engine "
         "already all-reduces the gradients only at the accumulation boundary when gradient_accumulation_steps is "
         "set, so call engine.backward(loss) and engine.step() on every micro-batch. A restart fails the same way.",
         retry=False),
)
