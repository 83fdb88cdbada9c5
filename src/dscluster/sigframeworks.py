"""Failure signatures of the other frameworks and servers people run on multi-GPU machines (round 22 of issue 45):
a model whose heads or vocabulary a tensor-parallel degree cannot split (vLLM, TGI, ColossalAI's shardformer), a world
size that the model-parallel sizes do not divide (Megatron core under NeMo, vLLM's workers), fairseq asked to
initialise distributed training for one process, Lightning's GPU request beyond the GPUs it sees and its ddp strategy
refused in a notebook, a model read through its DistributedDataParallel wrapper, NCCL refusing the "undefined" marker
of a newer caller (an older libnccl loaded than torch was built for), Horovod without the extension of the framework
it is imported from, and a command of another package shadowing a launcher's (Click's usage where torchtune's
argparse `tune` was meant); round 47: Lightning's strategy registry refusing a name, its DeepSpeed strategy refusing
a key of the DeepSpeed config it sets itself, and a name imported from Lightning that its installed version lacks; round
133: Coqui's Trainer started as one process with several GPUs visible. Each pattern is the wording of the component that prints it (vLLM's config.py, TGI's
weights.py, Megatron core's parallel_state.py, fairseq's distributed_utils.py, lightning_fabric's device parser and
Lightning's accelerator connector, torch.nn.Module.__getattr__, NCCL's init.cc, Horovod's common/util.py, Click's
core.py, Coqui Trainer's trainer_utils.py), never one log's; `retry=False` throughout: the same command meets the same check again. sigmessages.py
places this table in its own, after the training stack's. Round 134 added TorchRec's fbgemm_gpu of another release
than its torch or TorchRec, Lightning's re-creation of a DataLoader subclass to inject a DistributedSampler, and PyG's
heterogeneous sampler meeting a node or edge type its maps lack (torch/_ops.py, TorchRec's batched_embedding_kernel.py,
Lightning's utilities/data.py, PyG's neighbor loader). The real logs they are measured on are tests/data/failures
(tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

_TP_CAUSE = ("The model cannot be split evenly over the tensor-parallel (or pipeline-parallel) size asked for: each GPU "
             "of a shard group holds an equal part of the attention heads, the vocabulary or the layers, and the "
             "model's count (52 heads, a 65027-token vocabulary) is not a multiple of the number of GPUs (3, 4).")
_TP_FIX = ("Use a tensor-parallel size (--tensor-parallel-size, --num-shard, tp_size) that divides the model's "
           "attention heads and vocabulary (its config.json: num_attention_heads, num_key_value_heads, vocab_size), "
           "e.g. 2 or 4 GPUs rather than 3; serve on fewer GPUs, or add pipeline parallelism for the rest. A restart "
           "fails the same way.")
_WS_CAUSE = ("The number of processes started (the world size) does not fit the model-parallel sizes: one model copy "
             "needs tensor x pipeline (x context/expert) parallel ranks and the world size must be a multiple of that "
             "(or equal to it). Too few processes were started (one process from an interactive shell or `python "
             "script.py`, --nproc_per_node or the trainer's devices below the parallel sizes, fewer scheduler tasks "
             "than GPUs), or the sizes do not divide the GPUs.")
_WS_FIX = ("Start as many ranks as the parallel sizes need, a multiple of tensor x pipeline x context parallel size "
           "(torchrun --nproc_per_node=N, the trainer's devices and num_nodes, a scheduler's tasks per node equal to "
           "its GPUs per node), or lower the parallel sizes to fit the GPUs. A restart fails the same way.")
# A frame of a tensor-parallel package's divisibility helper, then (within a traceback's few lines: the code line, a
# caret line) its refusal of two numbers.
_TP_HELPER_FRAME = (r"[/\\](?:megatron|apex|fairscale|colossalai|vllm|sglang)[/\\]"
                    r"(?:(?![/\\](?:megatron|apex|fairscale|colossalai|vllm|sglang)[/\\])[^\n])*?\", line \d+, in "
                    r"(?:ensure_divisibility|divide(?:_and_check_no_remainder)?)\n(?:[^\n]*\n){0,3}?[^\n]*?"
                    r"(?:AssertionError|ValueError): \d+ is not divisible by \d+")

FRAMEWORK_SIGNATURES: tuple[Signature, ...] = (
    # vLLM's config.py (ModelConfig.verify_with_parallel_config: "Total number of attention heads (H) must be divisible
    # by tensor parallel size (T)." and "Total number of hidden layers (L) must be divisible by pipeline parallel size
    # (P)."), ColossalAI shardformer's policies ("The number of attention heads must be divisible by tensor parallel
    # size."), TGI's weights.get_sharded ("The choosen size N is not compatible with sharding on S shards"; "chosen"
    # in its MoE layers).
    _sig("tp-size-indivisible", r"(?:Total )?number of attention heads(?: \(\d+\))? must be divisible by tensor "
         r"parallel size|Total number of hidden layers \(\d+\) must be divisible by pipeline parallel size|"
         r"The choo?sen size \d+ is not compatible with sharding on \d+ shards|"
         # Round 74: Megatron core's TransformerConfig.__post_init__ (megatron/core/transformer/transformer_config.py).
         r"num_attention_heads \(\d+\) must be a multiple of tensor_model_parallel_size|"
         r"num_query_groups \(\d+\) must be a multiple or divisor of tensor_model_parallel_size",
         _TP_CAUSE, _TP_FIX, retry=False),
    # Megatron core's parallel_state.initialize_model_parallel ("world_size (W) is not divisible by M", M = tensor x
    # pipeline x context parallel size; older releases name the sizes, "... is not divisible by
    # tensor_model_parallel_size (T) x pipeline_model_parallel_size (P)"; "decoder world_size (W) is not divisible
    # by expert_tensor_model_pipeline_parallel size (E)"), vLLM's parallel_state ("world_size (W) is not equal to
    # tensor_model_parallel_size (T) x pipeline_model_parallel_size (P)").
    # torch's DeviceMesh (device_mesh.py: "Mesh should not be bigger than default world size[ W], but found N ranks!").
    # Round 74: Megatron's validate_args (megatron/training/arguments.py: "world size (W) is not divisible by
    # total_model_size (total_model_size=M)"; older and yaml_arguments.py: "... by tensor parallel size (T) times ...").
    # Round 90: GPT-NeoX's NeoXArgs.calculate_derived (megatron/neox_arguments/arguments.py: "(global_num_gpus /
    # pp_size) / mp_size [(G / P) / M] must be a whole number", "(num_gpus / pp_size) ..." before Sept. 2021): the
    # GPUs it counts (a hostfile's slots, else torch.cuda.device_count()) against pipe- x model-parallel size.
    _sig("world-size-indivisible", r"world_size \(\d+\) is not (?:divisible by|equal to) |"
         r"Mesh should not be bigger than default world size|"
         r"world size \(\d+\) is not divisible by (?:total_model_size|tensor (?:model )?parallel size) \(|"
         r"\((?:global_)?num_gpus / pp_size\) / mp_size \[\(\d+ / \d+\) / \d+\] must be a whole number",
         _WS_CAUSE, _WS_FIX, retry=False),
    # The tensor-parallel helpers' own check (ensure_divisibility / divide in Megatron's mpu and megatron/core/utils.py,
    # apex.transformer.utils, fairscale's nn/model_parallel/utils.py (divide_and_check_no_remainder), ColossalAI's
    # nn/layer/utils/common.py, vLLM's and SGLang's distributed/utils.py): '{} is not divisible by {}' (a ValueError in
    # newer copies) says only two numbers; the frame says who. Called from initialize_model_parallel it is the world
    # size against the model-parallel sizes (Megatron's old mpu); from anywhere else in those packages it is a layer
    # splitting a model dimension (heads, hidden or vocabulary size) over the tensor-parallel ranks. DeepSpeed's own
    # helper (`_ensure_divisibility`, utils/groups.py) is sigparallel.py's ds-moe-ep-size, not this.
    _sig("world-size-indivisible", r", in initialize_model_parallel\n(?:[^\n]*\n){1,3}?[^\n]*" + _TP_HELPER_FRAME,
         _WS_CAUSE, _WS_FIX, retry=False),
    _sig("tp-size-indivisible", _TP_HELPER_FRAME, _TP_CAUSE, _TP_FIX, retry=False),
    # fairseq's distributed_utils.distributed_init (and its forks'): raised when a distributed init method was set or
    # inferred (under Slurm from SLURM_* when --distributed-port > 0, under torch's launchers from their environment)
    # while the world size is 1.
    _sig("world-size-one", r"Cannot initialize distributed with distributed_world_size=1",
         "fairseq was asked to initialise distributed training for a single process: a distributed init method "
         "was set, or inferred from the environment (inside a batch scheduler's job fairseq reads the "
         "scheduler's variables whenever --distributed-port is set; under torchrun from its variables), while the world size is 1.",
         "For one GPU do not set up distributed training: drop --distributed-init-method/--distributed-port "
         "(--distributed-port=-1 inside a scheduler's job); for several, give --distributed-world-size the total number "
         "of GPUs (and start one task per GPU). A restart fails the same way.", retry=False),
    # Round 129: nanotron's config check (src/nanotron/config/config.py, Config.__post_init__): `assert any(
    # stage.start_training_step == 1 for stage in self.data_stages), "You must have a training stage starting at 1 in
    # the config's data_stages"`; on its main of late March 2024 the check read `assert all(...)` until
    # huggingface/nanotron#120 (merged 2024-04-02), so any config with a second stage failed it.
    _sig("nanotron-data-stages", r"You must have a training stage starting at 1 in the config's data_stages",
         "nanotron's config check found no data stage starting at training step 1 (data_stages[].start_training_step); "
         "or, on nanotron's main of late March 2024 (before huggingface/nanotron#120), the config had several data "
         "stages: that check then wrongly required every stage to start at step 1, and the example configs failed it.",
         "Give the first entry of data_stages start_training_step: 1 (each stage a unique name and start step); if it "
         "has one and only a later stage starts elsewhere, update nanotron (>= April 2024: #120 fixed the check and "
         "the example config generators). A restart fails the same way.", retry=False),
    # lightning_fabric's device parser (_sanitize_gpu_ids: "You requested gpu: [ids]\n But your machine only has:
    # [ids]"; "You requested GPUs:" in pytorch_lightning before 1.8). An empty list is a process that sees no GPU.
    _sig("invalid-device-ordinal", r"You requested (?:gpu|GPUs?): \[[\d, ]+\]\s+But your machine only has: \[\d",
         "Lightning was asked for GPU ids this process does not see: the Trainer's devices/gpus names fixed ids "
         "(devices=[1] on a machine with one GPU), more GPUs than CUDA_VISIBLE_DEVICES shows, or a scheduler gave "
         "each task fewer GPUs than the Trainer asks for (a scheduler giving each task its own GPU shows it only that one).",
         "Ask for GPUs that exist for this process: a count (devices=N) rather than fixed ids, ids below the "
         "visible count (nvidia-smi -L, CUDA_VISIBLE_DEVICES); under a scheduler start one task per GPU with every GPU "
         "of the node visible to each, and devices equal to the tasks per node. A restart fails the same way.",
         retry=False),
    # Round 74: Lightning's accelerator connector (_set_parallel_devices_and_init_accelerator; Fabric's connector too):
    # "`CUDAAccelerator` can not run on your system since the accelerator is not available." (1.x: GPUAccelerator).
    _sig("no-gpu", r"You requested (?:gpu|GPUs?): \[[\d, ]+\]\s+But your machine only has: \[\]|"
         r"`?(?:CUDA|GPU)Accelerator`? can not run on your system since the accelerator is not available",
         "Lightning was asked for GPUs and this process sees none: torch is a CPU-only build, the NVIDIA driver is "
         "missing or broken, or CUDA_VISIBLE_DEVICES (a container without --gpus) hides every GPU.",
         "Check `python -c 'import torch; print(torch.cuda.is_available(), torch.version.cuda)'` and nvidia-smi on "
         "that node; install a CUDA build of torch, start containers with --gpus all, or run on the CPU "
         "(accelerator='cpu'). A restart fails the same way.", retry=False),
    # Lightning's accelerator connector (Trainer) and Fabric: "`Trainer(strategy='ddp')` is not compatible with an
    # interactive environment. Run your code as a script, or choose ..."; before 1.6 "Selected distributed backend
    # ddp is not compatible with an interactive environment".
    _sig("notebook-ddp-strategy", r"is not compatible with an interactive environment",
         "Lightning refused a multi-process strategy in a notebook or another interactive session: 'ddp' (and "
         "'ddp_spawn', a default some libraries pass for several GPUs) starts the script again in new processes, "
         "which a notebook cell cannot be.",
         "Run the training as a script (python train.py, torchrun), or in the notebook use a notebook-compatible "
         "strategy: strategy='ddp_notebook' (fork, with CUDA untouched before trainer.fit) or one device; a library "
         "that builds the Trainer itself needs its strategy argument set. A restart fails the same way.",
         retry=False),
    # torch.nn.Module.__getattr__ ("'{type}' object has no attribute '{name}'") on the wrappers DDP, DataParallel and
    # FSDP, which do not forward the wrapped model's attributes. A private name (_sync_params) is the wrapper's own
    # API changing between torch versions, not this.
    _sig("ddp-wrapped-attribute", r"'(?:DistributedDataParallel|DataParallel|FullyShardedDataParallel)' object has "
         r"no attribute '(?!_)\w+'",
         "The code reads one of the model's own attributes (config, dtype, a custom method) from the parallel "
         "wrapper around it: with several GPUs accelerate.prepare(), the Trainer or the script wraps the model in "
         "DistributedDataParallel (or DataParallel/FSDP), which does not pass those attributes on, so the same code "
         "works on one GPU and fails on several.",
         "Read them from the model itself: accelerator.unwrap_model(model).ATTR, model.module.ATTR for "
         "DDP/DataParallel, or keep a reference to the model from before it was wrapped. A restart fails the same "
         "way.", retry=False),
    # Round 140: the same from DeepSpeed's engine as DeepSpeed before 0.3.0 named it (DeepSpeedLight, deepspeed_light.py),
    # which had no __getattr__ passing the wrapped module's attributes on (DeepSpeedEngine has one since 0.6.5, #1915,
    # so its "no attribute" is the model's own lack, not this). Only a model's own names (generate, config, ...):
    # the engine's own missing attributes are a DeepSpeed version mismatch.
    _sig("ddp-wrapped-attribute", r"'DeepSpeedLight' object has no attribute '(?:generate|config|generation_config|"
         r"save_pretrained|resize_token_embeddings|get_(?:in|out)put_embeddings|prepare_inputs_for_generation|"
         r"encoder|decoder)'",
         "The code calls a method or reads an attribute of the model (generate, config, ...) on the engine that "
         "deepspeed.initialize returned: DeepSpeed before 0.3 (its engine then named DeepSpeedLight) wraps the model "
         "and does not pass the wrapped module's own methods and attributes on.",
         "Call it on the model itself: keep the module you passed to deepspeed.initialize (or use engine.module) and "
         "call module.generate(...) there; DeepSpeed 0.6.5 and later pass such attributes through the engine. A "
         "restart fails the same way.", retry=False),
    # Round 147: ATen's chunk (aten/src/ATen/native/TensorShape.cpp chunk/unsafe_chunk: TORCH_CHECK(self.dim() > 0,
    # "chunk expects at least a 1-dimensional tensor")), reached from DataParallel's scatter of the forward's arguments
    # (torch/nn/parallel/scatter_gather.py scatter_kwargs -> _functions.Scatter -> torch/nn/parallel/comm.py scatter ->
    # torch._C._scatter, which chunks every tensor along dim 0; DistributedDataParallel before 1.12 scattered the same
    # way): a 0-dim tensor among them, as the transformers Trainer's num_items_in_batch (4.46-4.50, fixed by #36967).
    # Not where the text shows the program's own chunk call (".chunk(") without a scatter: a scalar chunked by the model.
    _sig("dataparallel-scalar-scatter", r"\A(?:(?=[\s\S]*?(?:\bscatter|data_parallel|DataParallel))|"
         r"(?![\s\S]*?\.chunk\())[\s\S]*?(?P<ev>\bchunk expects at least a 1-dimensional tensor)",
         "A scalar (0-dimensional) tensor was passed to the forward of a model wrapped in torch's DataParallel, which "
         "splits every tensor argument along its first dimension across the GPUs and cannot split a scalar: the "
         "transformers Trainer run with several GPUs visible and no distributed launcher uses DataParallel, and "
         "transformers releases between 4.46 and 4.50 passed num_items_in_batch to the model as such a tensor.",
         "Upgrade transformers (4.51 or later gives num_items_in_batch a dimension), or start the training with a "
         "launcher (torchrun, accelerate launch) so that it runs DistributedDataParallel, or make one GPU visible "
         "(CUDA_VISIBLE_DEVICES=0); in your own code give every tensor argument a batch dimension (unsqueeze(0)). A "
         "restart fails the same way.", retry=False),
    # NCCL's init.cc (parseCommConfig): "Invalid config blocking attribute value %d"; -2147483648 is INT_MIN,
    # NCCL_CONFIG_UNDEF_INT, the "not set" marker newer NCCL headers put in ncclConfig_t, which NCCL releases from
    # before that marker (2.14) reject as a value.
    _sig("nccl-lib-mismatch", r"Invalid config \w+ attribute value -2147483648\b",
         "The NCCL library loaded is older than the one torch (or the calling library) was built against: the "
         "caller leaves communicator settings at NCCL's 'undefined' marker, which an older libnccl rejects. Most "
         "often two NCCL libraries are installed (a pip nvidia-nccl package and a system or conda one) and the "
         "older is found first on the library path.",
         "Keep one NCCL, the one torch ships with: `pip list | grep nccl` and `python -c 'import torch; "
         "print(torch.cuda.nccl.version())'`, remove the extra package or the older libnccl from LD_LIBRARY_PATH, "
         "or install a torch matching the NCCL you need; the same on every node. A restart fails the same way.",
         retry=False),
    # Horovod's common/util.py check_extension: "Extension horovod.torch has not been built.  If this is not
    # expected, reinstall Horovod with HOROVOD_WITH_PYTORCH=1 to debug the build error." (also .tensorflow, .mxnet).
    _sig("horovod-extension-missing", r"Extension horovod\.\w+ has not been built",
         "Horovod was installed without its extension for the framework the script imports (horovod.torch, "
         "horovod.tensorflow): the framework was not installed, or was another version, when Horovod was built, "
         "so its build skipped (or failed for) that extension.",
         "Reinstall Horovod after the framework, on every node: HOROVOD_WITH_PYTORCH=1 (or HOROVOD_WITH_TENSORFLOW=1) "
         "pip install --no-cache-dir --force-reinstall horovod, with the same torch it will run with; `horovodrun "
         "--check-build` lists the frameworks a build has. A restart fails the same way.", retry=False),
    # Click's usage line and its UsageError ("No such command 'run'."; Click 7 and older quote it "run") from a
    # program named `tune`: torchtune's
    # `tune` is an argparse CLI ("usage: tune [-h] {download,ls,cp,run,validate,cat} ..."), so this `tune` is
    # another package's command installed over it.
    _sig("cli-shadowed", r"Usage: tune \[OPTIONS\] COMMAND \[ARGS\]\.\.\.(?:\n.{0,200}){0,4}\n(?:Error: )?No such "
         r"command ['\"]run['\"]",
         "The `tune` command that ran is not torchtune's: torchtune's CLI has a `run` subcommand and argparse's usage "
         "line; this one answers with Click's, so another installed package's `tune` comes first on the PATH (a "
         "later install put its command over torchtune's).",
         "Check `which tune` and `pip show torchtune`; reinstall torchtune in a clean environment (or uninstall the "
         "package that ships the other `tune`), or run torchtune's CLI through its module. A restart fails the same "
         "way.", retry=False),
    # Round 87: the same check (`strategy={strategy!r}`: not a registered name and not an instance of the Trainer's
    # own Strategy class) given an object, whose repr is `<module.Class object at 0x...>`: a Strategy of the other
    # Lightning package (pytorch_lightning beside lightning.pytorch, lightning_fabric beside lightning.fabric), most
    # often from a library built on the other one (Ray Train's RayDDPStrategy/RayFSDPStrategy before Ray 2.8).
    _sig("lightning-strategy-namespace", r"You selected an invalid strategy name: `?strategy=<[\w.]{1,200} object at 0x",
         "Lightning was given a strategy object that is not an instance of its own Strategy class: two Lightning "
         "packages are mixed, the standalone pytorch_lightning (or lightning_fabric) and the unified lightning "
         "(lightning.pytorch, lightning.fabric), whose classes are distinct; the strategy comes from one (most often "
         "through a library built on it: Ray Train's RayDDPStrategy/RayFSDPStrategy before Ray 2.8 subclass "
         "pytorch_lightning's), the Trainer or Fabric from the other.",
         "Import the Trainer, the LightningModule and the strategy from one package, the one the library uses "
         "(`import pytorch_lightning as pl` with Ray 2.7's utilities), or upgrade the library to a release that "
         "follows the package in use (Ray 2.8+); `pip list | grep -i lightning` shows which are installed. A restart "
         "fails the same way.", retry=False),
    # Lightning's accelerator connector (lightning/pytorch/trainer/connectors/accelerator_connector.py, and Fabric's
    # connector.py): "You selected an invalid strategy name: `strategy='dp'`. It must be either a string or an instance
    # of `...strategies.Strategy`": a name not in the installed version's strategy registry. Lightning 2.0 dropped
    # 'dp', 'ddp_sharded', 'horovod', ... and strategy=None, so code written for 1.x meets it; a typo does too.
    _sig("lightning-strategy-name", r"You selected an invalid strategy name: `?strategy=",
         "Lightning does not know the strategy the Trainer (or Fabric) was given: the name is not in the installed "
         "version's strategy registry. Code written for another Lightning version is the usual cause (2.0 removed "
         "'dp', 'ddp_sharded', 'horovod' and strategy=None, which 1.x took), or a misspelt name.",
         "Use a strategy the installed Lightning has (auto, ddp, ddp_spawn, deepspeed_stage_2, fsdp, ...: "
         "`python -c 'from lightning.pytorch.strategies import StrategyRegistry; print(StrategyRegistry.available_"
         "strategies())'`), or install the Lightning version the code was written for (pytorch-lightning<2.0 for "
         "'dp' or strategy=None). A restart fails the same way.", retry=False),
    # Lightning's DeepSpeedStrategy (strategies/deepspeed.py, _format_batch_size_and_grad_accum_config) sets
    # gradient_accumulation_steps from the Trainer's accumulate_grad_batches and refuses a ds_config that sets it:
    # "Do not set `gradient_accumulation_steps` in the DeepSpeed config as this will be set with the
    # `accumulate_grad_batches` argument passed via the Lightning Trainer."; before 1.6 "Within the DeepSpeed config,
    # do not set gradient_accumulation_steps as this will be set via accumulate_grad_batches=x ..." (and the same for
    # train_batch_size/train_micro_batch_size_per_gpu "as these will be passed from the data-loader").
    _sig("lightning-deepspeed-config", r"Do not set `\w+` in the DeepSpeed config as this will be set|"
         r"Within the DeepSpeed config, do not set \w+ (?:or \w+ )?as th(?:is|ese) will be (?:set|passed)",
         "Lightning's DeepSpeed strategy refused the DeepSpeed config: it sets a key Lightning fills in itself "
         "(gradient_accumulation_steps from the Trainer's accumulate_grad_batches; in old versions the batch sizes "
         "from the DataLoader).",
         "Remove that key from the DeepSpeed config and give it to Lightning instead: Trainer(accumulate_grad_batches"
         "=N) for gradient accumulation, the DataLoader's batch_size for the micro batch; if DeepSpeed then asks for "
         "train_batch_size to match, leave train_batch_size out of the config too. A restart fails the same way.",
         retry=False),
    # Python's bare `ImportError: cannot import name 'X'` (no `from 'module'`, as Python before 3.7 prints it) right
    # under a traceback line importing it from Lightning (`from pytorch_lightning.plugins import DDPSpawnPlugin`):
    # Lightning renamed and moved its plugins and strategies between versions (DDPPlugin, DeepSpeedPlugin,
    # DDPSpawnPlugin), so the installed Lightning is another version than the code's. Python's newer wording, with
    # the module's site-packages path, is sigmessages.CANNOT_IMPORT's.
    _sig("import-name", r"^[ \t]*from (?:pytorch_lightning|lightning_fabric|lightning)(?:\.\w+)* import [\w, ()]+\n"
         r"[ \t]*ImportError: cannot import name '?\w+'?[ \t]*$",
         "The code imports a name from Lightning that the installed Lightning does not have: Lightning renamed and "
         "moved its plugins and strategies between versions (DDPPlugin, DDPSpawnPlugin and DeepSpeedPlugin became "
         "strategies, and 2.0 removed the old names), so the installed version is another than the code was written "
         "for.",
         "Install the Lightning version the code (or the library importing it) was written for (`pip show "
         "pytorch-lightning`; its requirements or environment file), the same on every node. A restart fails the "
         "same way.", retry=False),
    # Round 74, from Lightning's source (no log yet; Lightning-AI/pytorch-lightning master of 2026-07).
    # strategies/fsdp.py (FSDPStrategy.setup_optimizers; fabric/strategies/fsdp.py, xla_fsdp.py the same): no parameter
    # of the optimizer is a flattened FSDP parameter.
    _sig("lightning-fsdp-optimizer-params", r"The optimizer does not seem to reference any (?:XLA)?FSDP parameters",
         "Lightning's FSDP strategy found an optimizer that holds none of the FSDP-wrapped parameters: "
         "configure_optimizers() (or Fabric's setup_optimizers) was given the parameters of the model from before it "
         "was wrapped (self.parameters() of a module FSDP wraps in configure_model, or a model captured earlier), or "
         "the optimizer was made before the model was set up.",
         "Create the optimizer from the wrapped model: self.trainer.model.parameters() in configure_optimizers(); "
         "with Fabric call fabric.setup_module(model) first and build the optimizer from its parameters; a restart "
         "fails the same way.", retry=False),
    # strategies/deepspeed.py: _setup_model_and_optimizer ("Currently only one optimizer is supported with DeepSpeed.
    # Got N optimizers instead.") and older _init_optimizers ("DeepSpeed currently only supports single optimizer,
    # single optional scheduler.").
    _sig("lightning-deepspeed-one-optimizer", r"Currently only one optimizer is supported with DeepSpeed|"
         r"DeepSpeed currently only supports single optimizer, single optional scheduler",
         "Lightning's DeepSpeed strategy takes one optimizer (and at most one scheduler), and configure_optimizers() "
         "returns several (a GAN's two, or a list of optimizers).",
         "Return one optimizer from configure_optimizers() (parameter groups for parts that need other settings), "
         "or train with another strategy (ddp, fsdp) for several optimizers; a restart fails the same way.",
         retry=False),
    # strategies/deepspeed.py (DeepSpeedStrategy.setup: clipping is DeepSpeed's gradient_clipping, a norm).
    _sig("lightning-deepspeed-clip-value", r"DeepSpeed does not support clipping gradients by value",
         "The Trainer asks for gradient clipping by value (gradient_clip_algorithm='value'), and Lightning's DeepSpeed "
         "strategy clips only by norm (DeepSpeed's gradient_clipping).",
         "Use Trainer(gradient_clip_val=X, gradient_clip_algorithm='norm') (the default algorithm), or no clipping; "
         "a restart fails the same way.", retry=False),
    # strategies/deepspeed.py (DeepSpeedStrategy.setup_environment): any accelerator other than CUDAAccelerator.
    _sig("lightning-deepspeed-cuda-only", r"The DeepSpeed strategy is only supported on CUDA GPUs",
         "Lightning's DeepSpeed strategy runs only on CUDA GPUs, and the Trainer's accelerator is another one: "
         "accelerator='cpu' (or 'mps') was given, or 'auto' found no GPU (a CPU-only torch, no driver, "
         "CUDA_VISIBLE_DEVICES empty).",
         "Run it with Trainer(accelerator='gpu') on a node whose torch sees the GPUs (torch.cuda.is_available()), or "
         "use a strategy that runs on that accelerator (ddp, auto); a restart fails the same way.", retry=False),
    # trainer/connectors/accelerator_connector.py and fabric/connector.py (_check_strategy_and_fallback): the fork-based
    # strategies (ddp_fork, ddp_notebook) where os.fork does not exist or is not safe (Windows, macOS' spawn default).
    _sig("lightning-fork-platform", r"but process forking is not supported on this platform",
         "A fork-based Lightning strategy (ddp_fork, ddp_notebook) was chosen on a platform without process forking "
         "(Windows; Python's fork start method unavailable there).",
         "Use strategy='ddp_spawn' (or 'ddp' from a script) on that platform; a restart fails the same way.",
         retry=False),
    # trainer/connectors/accelerator_connector.py ("The strategy `fsdp` requires a GPU accelerator, but received
    # `accelerator='cpu'`") and fabric/connector.py ("You selected the FSDP strategy but FSDP is only available on GPU").
    _sig("lightning-fsdp-gpu-only", r"The strategy `?fsdp`? requires a GPU accelerator|"
         r"You selected the FSDP strategy but FSDP is only available on GPU",
         "Lightning's FSDP strategy was given a non-GPU accelerator (accelerator='cpu' or 'mps'); Lightning runs FSDP "
         "on CUDA GPUs only.",
         "Set accelerator='gpu' (or 'cuda') on machines whose torch sees GPUs, or use another strategy (ddp, auto) "
         "for a CPU run; a restart fails the same way.", retry=False),
    # Coqui's Trainer, trainer/trainer_utils.py setup_torch_training_env (coqui-ai/Trainer, and TTS's own copy before
    # it): more than one GPU visible to a process not started for DDP (no --use_ddp, no accelerate): " [!] {num_gpus}
    # active GPUs. Define the target GPU by `CUDA_VISIBLE_DEVICES`. For multi-gpu training use
    # `TTS/bin/distribute.py`."; the idiap fork names `python -m trainer.distribute` instead.
    _sig("coqui-trainer-multi-gpu-needs-distribute", r"\[!\] \d+ active GPUs\. Define the target GPU by "
         r"`?CUDA_VISIBLE_DEVICES`?\. For multi-gpu training use",
         "Coqui's Trainer (Coqui TTS and its recipes) was started as one plain process while several GPUs were "
         "visible; it refuses that, since its multi-GPU runs are launched by its distribute launcher, one process per "
         "GPU with --use_ddp (the TTS/bin/distribute.py its older message names has moved).",
         "Launch the DDP run with `python -m trainer.distribute --script train.py --gpus \"0,1\"` (the script's own "
         "arguments after it), or train on one GPU by naming it: CUDA_VISIBLE_DEVICES=0 python train.py. A restart "
         "fails the same way.", retry=False),
    # Round 134 (recommendation and graph models). TorchRec's embedding kernels live in fbgemm_gpu, a native library
    # built for one torch: torch/_ops.py's _OpNamespace.__getattr__ for an operator never registered (older torch
    # "'_OpNamespace' object has no attribute 'op'", then "'_OpNamespace' 'fbgemm' object has no attribute", its cause
    # "No such operator fbgemm::op" from torch._C._jit_get_operation); where the message does not name the namespace,
    # only fbgemm_gpu's own operator names (sparse_ops, jagged_tensor_ops, table-batched embedding ops, the managed-
    # tensor/UVM ops); fbgemm_gpu's library failing to load ("File fbgemm_gpu_py.so not found", torchrec#557 and
    # dlrm#256; glibc's "fbgemm_gpu_py.so: undefined symbol", torchrec#551, and its gen_ai library's,
    # generative-recommenders#62); and TorchRec's batched_embedding_kernel.py reading fbgemm_gpu's optimizer API of
    # another release (optimizer_args.learning_rate, gone behind
    # SplitTableBatchedEmbeddingBagsCodegen.get_learning_rate() in fbgemm_gpu 1.2: torchrec PR 2832, FBGEMM PR 3849).
    _sig("fbgemm-version-mismatch", r"'_OpNamespace' 'fbgemm' object has no attribute|No such operator fbgemm::|"
         r"'_OpNamespace' object has no attribute '(?:permute_[12]D_sparse_data|jagged_2d_to_dense|dense_to_jagged|"
         r"jagged_to_padded_dense|bounds_check_indices|merge_pooled_embeddings|new_managed_tensor|new_unified_tensor|"
         r"asynchronous_complete_cumsum|asynchronous_exclusive_cumsum|block_bucketize_sparse_features|offsets_range|"
         r"permute_pooled_embs(?:_auto_grad)?|segment_sum_csr|expand_into_jagged_permute)'|"
         r"File fbgemm_gpu_py\.so not found|fbgemm_gpu(?:_experimental_gen_ai)?_py\.so: undefined symbol|"
         r"'OptimizerArgs' object has no attribute 'learning_rate'|"
         r"'SplitTableBatchedEmbeddingBagsCodegen' object has no attribute 'get_learning_rate'",
         "fbgemm_gpu (the library of TorchRec's embedding kernels) does not match the installed torch or TorchRec: "
         "its native library was built for another torch (a nightly next to a stable torch, a CPU build next to a "
         "CUDA torch or the reverse, another CUDA version), so it did not load and its operators (torch.ops.fbgemm.*) "
         "were never registered; or TorchRec calls an fbgemm_gpu API of another release (optimizer_args.learning_rate, "
         "which fbgemm_gpu 1.2 replaced by get_learning_rate()).",
         "Install torch, fbgemm_gpu and torchrec as one release set from one index: stable with stable (torchrec 1.1 "
         "with fbgemm_gpu 1.1, torchrec 1.2 with fbgemm_gpu 1.2, each with the torch it was built for), nightly with "
         "nightly of the same date, and one variant for all three (pip install torch fbgemm-gpu torchrec --index-url "
         "https://download.pytorch.org/whl/cu126, or .../whl/cpu); check that no other torch build came in with them "
         "(pip list | grep -i -e torch -e fbgemm). A restart fails the same way.", retry=False),
    # PyTorch Lightning re-creates a training DataLoader to inject a DistributedSampler under DDP, calling its class
    # again with torch DataLoader's arguments (lightning/pytorch/utilities/data.py _update_dataloader); a subclass
    # whose __init__ takes other arguments fails there: Python's own TypeError (Lightning before 1.6, pyg#3234), then
    # Lightning's words for it (fabric/utilities/data.py _reinstantiate_wrapped_cls "... can be passed to its parent's
    # `dataset=...` `__init__` argument", _dataloader_init_kwargs_resolve_sampler "Trying to inject custom `Sampler`
    # into the `X` instance. This would fail as ..." / "Trying to inject parameters into the `X` instance").
    _sig("dataloader-reinit-for-sampler", r"__init__\(\) got multiple values for argument '(?:dataset|sampler|"
         r"batch_sampler)'|can be passed to its parent's `?(?:dataset|sampler|batch_sampler|shuffle)=\.\.\.`? "
         r"`?__init__`? argument|Trying to inject (?:custom `?Sampler`? into|parameters into) the `?\w+`? instance\. "
         r"This would fail as",
         "Under DDP (more than one GPU) PyTorch Lightning re-creates the training DataLoader to put a "
         "DistributedSampler in it, calling the loader's class again with torch DataLoader's arguments (dataset=, "
         "sampler=, ...); the loader is a subclass whose __init__ takes other arguments (a graph library's "
         "NeighborLoader or NeighborSampler, a custom loader with its own first argument, **kwargs that also carry "
         "dataset), so it cannot be re-created that way.",
         "Update the library that provides the loader (PyTorch Geometric fixed its loaders for this re-creation); "
         "for your own subclass, accept those arguments (drop dataset/sampler from **kwargs before passing them on, "
         "keep every __init__ argument as an attribute of the same name); or turn the injection off "
         "(Trainer(use_distributed_sampler=False), before Lightning 2.0 replace_sampler_ddp=False) and give the "
         "loader a DistributedSampler yourself. A restart fails the same way.", retry=False),
    # PyG's heterogeneous neighbor sampling (torch_sparse's or pyg-lib's C++ hetero_neighbor_sample, called from
    # torch_geometric/loader/neighbor_loader.py hetero_sample, later torch_geometric/sampler/neighbor_sampler.py) looks
    # node and edge types up in std::unordered_map::at, whose out_of_range reads "_Map_base::at": a type its maps lack.
    # Only under a torch_geometric loader/sampler frame: the bare C++ words come from any extension.
    _sig("pyg-hetero-sampler-key-missing", r"torch_geometric[/\\](?:loader|sampler)[/\\]\w+\.py\", line \d+, in "
         r"\w*sample\w*\n(?:[^\n]*\n){0,8}?(?P<ev>[^\n]{0,200}?_Map_base::at)",
         "PyTorch Geometric's heterogeneous neighbor sampler (its C++ part in torch_sparse or pyg-lib) looked up a "
         "node or edge type that its maps do not hold: num_neighbors (or the input nodes) names a type in another "
         "form than the graph's edge types. A known cause under PyTorch Lightning's DDP: PyG 2.0.2's NeighborLoader, "
         "re-created by Lightning to inject a DistributedSampler, converted its already converted edge types again "
         "(fixed in PyG 2.0.3).",
         "Update PyTorch Geometric (2.0.3 or newer) when this comes under Lightning's DDP or another re-created "
         "loader; otherwise give num_neighbors one entry for each of data.edge_types, keyed by those exact "
         "(source, relation, destination) tuples, and input_nodes a type of data.node_types. A restart fails the "
         "same way.", retry=False),
)
