"""Failure signatures of DeepSpeed itself and of PyTorch's distributed and autograd machinery: a parallel layout the
ranks cannot hold (MoE's expert-parallel size, AutoTP's tensor-parallel size, a pipeline's stages; round 52: Megatron's
layers over its pipeline stages, its distributed optimizer's instances over the data-parallel ranks, a checkpoint saved
under another tensor- or pipeline-parallel size), an op the accelerator or the GPU generation does not have, the
launcher's reading of CUDA_VISIBLE_DEVICES, DDP given nothing to train, anomaly mode's NaN check; and round 50's (torch
2.4-2.10 distributed): an op DTensor has no sharding rule for, a DeviceMesh sliced by names it lacks or asked for the
one group of a 2-D mesh, FSDP2's 2-D state_dict refused by torch 2.4, DDP's static graph meeting a graph that changes,
torch 2.5's c10d address-formatting bug. sigmessages.py places them with the other families read from an exception's
own message, before everything that only says a rank failed (and before signatures.py's `ds-include`).

Each pattern is the wording of the component that prints it, cited at each (DeepSpeed's deepspeed/utils/groups.py,
module_inject/auto_tp.py, op_builder/builder.py, op_builder/<accelerator>/no_impl.py, launcher/runner.py; Megatron's
transformer_block.py, arguments.py, parallel_state.py and checkpointing.py; PyTorch's
torch/distributed/pipelining/stage.py, torch/nn/parallel/distributed.py, torch/csrc/autograd/engine.cpp,
torch/distributed/tensor/_sharding_prop.py, torch/distributed/device_mesh.py, torch/csrc/distributed/c10d/reducer.cpp
and socket.cpp), never one log's; `retry=False` throughout: the same command meets the same layout, op table, devices
or NaN. The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py, rounds 21, 50,
52). Pipeline parallelism's signatures are in sigpipeline.py, spliced into this table in their place.
"""

from __future__ import annotations

from dscluster.sigpipeline import PIPELINE_SIGNATURES
from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

PARALLEL_SIGNATURES: tuple[Signature, ...] = (
    # DeepSpeed MoE (deepspeed/utils/groups.py): _create_expert_and_data_parallel (and _create_expert_data_and_model_
    # parallel with a Megatron mpu) call _ensure_divisibility(world size or pipeline stride, ep_size), whose assert
    # says only '{} is not divisible by {}': the traceback's frame of the caller says it is the expert-parallel size.
    # Bounded to the few lines of a traceback between them.
    _sig("ds-moe-ep-size", r"in _create_expert_(?:and_data|data_and_model)_parallel\n(?:.*\n){0,12}?"
         r"(?:AssertionError: )?\d+ is not divisible by \d+",
         "DeepSpeed MoE's expert-parallel size (the MoE layer's ep_size; the message says `WORLD is not divisible by "
         "EP`) does not divide the number of ranks (per pipeline stage), so the expert-parallel groups cannot be "
         "formed: e.g. a script's ep_size of 8 run on 4 GPUs.",
         "Set ep_size to a divisor of the data-parallel world size (the GPU count divided by the pipeline stages), at "
         "most the GPU count, and num_experts to a multiple of it; a restart fails the same way.", retry=False),
    # Megatron's layer split over the pipeline stages: megatron/core/transformer/transformer_block.py
    # (get_num_layers_to_build: "num_layers should be divisible by pipeline_model_parallel_size"; newer releases print
    # the numbers, "num_layers=N should be divisible by config.pipeline_model_parallel_size=P"; forks say
    # num_hidden_layers), megatron/training/arguments.py (validate_args: "Number of layers should be divisible by the
    # pipeline-model-parallel size"; with a virtual pipeline "number of layers should be divisible by the pipeline
    # parallel size"; review 63: later releases' virtual-pipeline branch "number of layers of the model must be divisible
    # pipeline model parallel size"), the legacy megatron/model/transformer.py ("num_layers must be divisible by
    # transformer_pipeline_model_parallel_size"). vLLM's own wording is sigframeworks.py's tp-size-indivisible. Not the
    # virtual-pipeline check after it ("number of layers per pipeline stage must be divisible number of layers per
    # virtual pipeline stage": --num-layers-per-virtual-pipeline-stage, not the pipeline size).
    _sig("megatron-pp-layers", r"num_(?:hidden_)?layers(?:=\d+)? should be divisible by (?:config\.)?"
         r"pipeline_model_parallel_size|number of layers should be divisible by the pipeline(?:-model-| )parallel size|"
         r"number of layers of the model must be divisible pipeline model parallel size|"
         r"num_layers must be divisible by transformer_pipeline_model_parallel_size",
         "Megatron (Megatron core, and NeMo, Megatron-Bridge and the other trainers built on it) splits the decoder's "
         "layers evenly over the pipeline stages, and the model's number of layers (counting the embedding and the "
         "loss when they are accounted as pipeline layers) is not a multiple of pipeline_model_parallel_size (times "
         "the virtual pipeline size with an interleaved schedule): e.g. 46 layers on 4 stages.",
         "Use a pipeline-parallel size that divides the number of layers, or give the split explicitly: "
         "--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers (num_layers_in_first_pipeline_stage, "
         "num_layers_in_last_pipeline_stage) or --pipeline-model-parallel-layout for an uneven split; a restart fails "
         "the same way.", retry=False),
    # Round 144. Megatron's _initialize_distributed (megatron/initialize.py of Megatron-DeepSpeed and GPT-NeoX, and of
    # Megatron-LM before b57429e17 "Parse LOCAL_RANK in arguments.py, get device from LOCAL_RANK"): `device = rank %
    # device_count`, then `assert local_rank == device, 'expected local-rank to be the same as rank % device-count.'`.
    # Not DeepSpeed's engine check (`Mismatch in local rank setting, args.local_rank=... but env['LOCAL_RANK']=...`)
    # nor nanotron's `Local rank mismatch` (its local process group): other comparisons, other fixes.
    _sig("megatron-local-rank-mismatch", r"expected local-rank to be the same as rank % device-count",
         "Megatron's start-up (Megatron-DeepSpeed, GPT-NeoX, older Megatron-LM: _initialize_distributed) takes the GPU "
         "of rank r to be r % torch.cuda.device_count() and asserts that the launcher's local rank is that number. "
         "That holds only when every node runs exactly as many ranks as GPUs each rank sees, numbered node by node. It "
         "fails when the nodes have different numbers of GPUs (the launcher numbers each node's ranks from 0, e.g. "
         "global ranks 2-5 on a 4-GPU node after a 2-GPU one get local ranks 0-3, rank % 4 gives 2, 3, 0, 1), when a "
         "node runs fewer ranks than the GPUs it shows (--num_gpus, --include or hostfile slots below the node's "
         "count), when each rank sees only its own GPU (a batch scheduler's one GPU per task, --gpus-per-task=1, or a per-rank CUDA_VISIBLE_DEVICES: "
         "device_count() is 1), or when ranks are not placed node by node.",
         "Launch as many ranks on every node as the GPUs each rank sees, ranks in node order: the same number of GPUs "
         "on every node (equal hostfile slots; on a bigger node hide the extra GPUs with CUDA_VISIBLE_DEVICES so "
         "device_count() matches its slots), every rank seeing all of its node's GPUs (the scheduler's per-node request, "
         "--gpus-per-node or --gres=gpu:N, not --gpus-per-task=1), block placement of ranks. A restart fails the same way.", retry=False),
    # Megatron core's parallel_state.initialize_model_parallel: the distributed optimizer sharded over
    # --num-distributed-optimizer-instances partial groups of the data-parallel (x context-parallel) ranks, "Data
    # parallel size should be divisible by partial DistOpt shard factor", and of the MoE layers' expert data-parallel
    # ranks, "Expert data parallel size should be divisible by partial DistOpt shard factor".
    _sig("megatron-distopt-instances", r"data parallel size should be divisible by partial DistOpt shard factor",
         "Megatron core shards the distributed optimizer over --num-distributed-optimizer-instances groups, each a part "
         "of the data-parallel ranks (the world size divided by tensor x pipeline x context parallel size; for MoE "
         "layers the expert data-parallel ranks, the world size divided by expert-tensor x expert-model x pipeline "
         "parallel size), and that number of ranks is not a multiple of the instances: e.g. 4 GPUs with TP=2 and EP=2 "
         "leave one expert data-parallel rank for 2 instances.",
         "Make the (expert) data-parallel size a multiple of --num-distributed-optimizer-instances: more GPUs, smaller "
         "tensor, pipeline or expert-model parallel sizes, or fewer optimizer instances (1, the default); a restart "
         "fails the same way.", retry=False),
    # Megatron's checkpoint loader (megatron/training/checkpointing.py, check_checkpoint_args' _compare, the same in
    # Megatron-DeepSpeed: "{arg} value from checkpoint ({v}) is not equal to the input argument value ({a})."; GPT-NeoX's
    # check_checkpoint_args: "... is not equal to the currently set argument value (...)") asserts that the run's
    # parallel layout is the checkpoint's: its weights are split per tensor- and pipeline-parallel rank. Only the
    # parallel sizes: a num_layers or hidden_size compared the same way is another model, not another layout.
    _sig("megatron-ckpt-parallel-mismatch", r"\b(?:(?:tensor|pipeline)_)?(?:model|pipe)_parallel_size value from "
         r"checkpoint \(\d+\) is not equal to the (?:input|currently set) argument ?value \(\d+\)",
         "The checkpoint was saved with another tensor- or pipeline-parallel size than this run's (the message names "
         "the size and both values): a Megatron (Megatron-DeepSpeed, GPT-NeoX) checkpoint holds one file per tensor- "
         "and pipeline-parallel rank (mp_rank_XX_YYY), and the loader refuses to read it under another layout.",
         "Run with the checkpoint's parallel sizes (--use-checkpoint-args), or convert the checkpoint to the new layout "
         "first (Megatron's tools/checkpoint/convert.py with --target-tensor-parallel-size / "
         "--target-pipeline-parallel-size, NeMo's megatron_change_num_partitions.py, DeepSpeed's universal checkpoint), "
         "or save in Megatron's distributed checkpoint format (--ckpt-format torch_dist), which is resharded on load; a "
         "restart fails the same way.", retry=False),
    # DeepSpeed-Inference's tensor parallelism: AutoTP (module_inject/auto_tp.py: f"{param} ({param_val}) must be
    # divisible by mp_size ({self.mp_size})"), the injection policies (replace_module.py: "n_heads ({}) must be
    # divisible by mp_size ({})") and tp_shard.py ("Number of attention heads ({total_size}) must be divisible by
    # mp_size ({mp_size})"): a dimension it splits across the tensor-parallel GPUs is not a multiple of their number.
    _sig("ds-tp-divisible", r"\(\d+\) must be divisible by mp_size \(\d+\)",
         "DeepSpeed-Inference's tensor parallelism (AutoTP or kernel injection) splits each layer across the "
         "tensor-parallel GPUs (tp_size, formerly mp_size): the dimension the message names (attention heads, "
         "hidden size, KV heads) must be a multiple of that number, and it is not.",
         "Use a tensor-parallel size that divides the number named (52 heads: 1, 2, 4, 13 or 26 GPUs; launch that many "
         "with --num_gpus and set tensor_parallel.tp_size to it), or serve the model without tensor parallelism "
         "(one GPU per replica, ZeRO-Inference); a restart fails the same way.", retry=False),
    # DeepSpeed's hybrid engine (runtime/hybrid_engine.py, create_inference_module; DeepSpeed-Chat's step 3 with
    # --enable_hybrid_engine): with hybrid_engine.inference_tp_size > 1 it makes world_size // inference_tp_size groups
    # of consecutive ranks and sets self.mp_group and self.mp_replace only on a rank inside one, so a tp size above the
    # world size, or one that does not divide it, leaves a rank without them and its first use raises AttributeError.
    _sig("ds-hybrid-tp-size", r"'DeepSpeedHybridEngine' object has no attribute '(?:mp_group|mp_replace)'",
         "DeepSpeed's hybrid engine (DeepSpeed-Chat's actor with --enable_hybrid_engine) splits the model for "
         "generation into tensor-parallel groups of inference_tp_size consecutive GPUs; with inference_tp_size larger "
         "than the number of GPUs in the run, or not dividing it, some ranks are in no group and never get one.",
         "Set --inference_tp_size (hybrid_engine.inference_tp_size) to a divisor of the number of GPUs, at most the "
         "GPUs of one node (1 always fits), or launch a number of GPUs it divides. A restart fails the same way.",
         retry=False),
    *PIPELINE_SIGNATURES,  # sigpipeline.py, in this place
    # DeepSpeed's accelerators other than CUDA (deepspeed/ops/op_builder/{cpu,npu,xpu,hpu}/no_impl.py, the
    # NotImplementedBuilder's load(): 'This op had not been implemented on CPU backend.'): the op asked for (CUDA
    # kernels: inference kernel injection, fused optimizers, transformer ops) has no implementation there.
    _sig("ds-op-no-cpu", r"This op had not been implemented on \w+ backend",
         "DeepSpeed runs on an accelerator other than CUDA (its CPU backend when it finds no NVIDIA GPU or a torch "
         "without CUDA; or NPU, XPU, HPU) and the op the program loads, one of DeepSpeed's CUDA kernels (inference "
         "kernel injection, fused Adam, transformer ops), has no implementation there.",
         "On a machine with NVIDIA GPUs make DeepSpeed see CUDA: a CUDA build of torch (torch.cuda.is_available()), "
         "no DS_ACCELERATOR=cpu, `ds_report` naming the cuda accelerator; without one, turn the CUDA-only feature off "
         "(replace_with_kernel_inject=False, torch's own optimizer, the program's option to run without DeepSpeed); "
         "a restart fails the same way.", retry=False),
    # DeepSpeed's op builder (op_builder/builder.py, CUDAOpBuilder.compute_capability_args): the op's filter_ccs drops
    # the architectures it does not support; DeepSpeed-MII/FastGen's ops (ragged_device_ops, inference_core_ops,
    # DeepSpeed-Kernels) keep 8.0 and newer only, and nothing was left of the GPUs present.
    _sig("mii-compute-capability", r"Unable to load \w+ op due to no compute capabilities remaining after filtering",
         "The DeepSpeed op the message names is built only for newer GPUs than these: its builder filtered out every "
         "compute capability present. DeepSpeed-MII's FastGen (mii.pipeline, mii.serve) and DeepSpeed-Kernels need "
         "compute capability 8.0 or newer (Ampere: A100, A10, L4, H100); V100 (7.0) and T4 (7.5) are older.",
         "Run on Ampere or newer GPUs, or on older ones use what supports them: DeepSpeed-MII's legacy API "
         "(mii.legacy, mii.deploy) or DeepSpeed-Inference's init_inference; TORCH_CUDA_ARCH_LIST cannot add an "
         "architecture the op refuses; a restart fails the same way.", retry=False),
    # CUDA names a GPU by index or by UUID ("GPU-8932f937-...", "MIG-..." for a MIG slice: CUDA's documentation of
    # CUDA_VISIBLE_DEVICES), and some schedulers (PBS's cgroups, Kubernetes device plugins) set the UUIDs. A program
    # that reads CUDA_VISIBLE_DEVICES as indices, as DeepSpeed's launcher does (deepspeed/launcher/runner.py, `slots =
    # [int(x) for x in slots.split(SLOT_SEP)]` of the --include=localhost:... it makes of it), fails in Python's int():
    # "invalid literal for int() with base 10: 'GPU-...'". The same launcher's gap (0,2 against the GPUs it counted)
    # is signatures.py's ds-include.
    _sig("ds-visible-devices", r"invalid literal for int\(\) with base 10: '(?:GPU|MIG)-[0-9a-f]",
         "CUDA_VISIBLE_DEVICES holds GPU UUIDs (GPU-..., MIG-..., as some schedulers set it) where the program reads "
         "GPU indices: DeepSpeed's launcher turns CUDA_VISIBLE_DEVICES into --include=localhost:... and parses each "
         "entry as an integer slot.",
         "Unset CUDA_VISIBLE_DEVICES for the deepspeed launcher and choose the GPUs by index with --include "
         "localhost:0,1 (nvidia-smi -L maps the UUIDs to indices), or launch with torchrun, which leaves "
         "CUDA_VISIBLE_DEVICES to CUDA; a restart fails the same way.", retry=False),
    # torch/nn/parallel/distributed.py (DistributedDataParallel.__init__): no parameter of the module requires a grad.
    # Round 58: before DDP's constructor had that check, the reducer's bucket assignment asserted on the empty parameter list
    # instead: c10d reducer.cpp, compute_bucket_assignment_by_size's AT_ASSERT(tensors.size() > 0) ("ASSERT FAILED"
    # in 1.1, "INTERNAL ASSERT FAILED" from 1.2; torch/csrc/distributed/c10d/ or torch/lib/c10d/). The pytorch/pytorch
    # #25552 follow-up of #25550 (the maintainers) turned that assert into the message above.
    _sig("ddp-no-trainable-params",
         r"DistributedDataParallel is not needed when a module doesn't have any parameter that requires a gradient|"
         r"tensors\.size\(\) > 0 (?:INTERNAL )?ASSERT FAILED at \"?[^\n\"]{0,300}c10d[/\\]reducer\.cpp\b",
         "DistributedDataParallel was given a module none of whose parameters requires a gradient (all frozen: a "
         "teacher, a feature extractor for a loss, or a model whose trainable part was not built or not unfrozen), "
         "or a model already quantized (torch.ao.quantization's convert or quantize_dynamic leave int8 modules whose "
         "packed weights are not parameters), so it has nothing to synchronise.",
         "Wrap only the modules that train: keep frozen ones out of DDP (move them with .to(device)); if the module "
         "should train, check which parameters have requires_grad (the config or code that unfreezes them, adapters "
         "added before wrapping); fine-tune a quantized model in its QAT form (prepare_qat, under DDP) and convert "
         "it to int8 only after the last step; a restart fails the same way.", retry=False),
    # Autograd's anomaly mode (torch/csrc/autograd/engine.cpp, validate_outputs under set_detect_anomaly: "Function
    # 'X' returned nan values in its Nth output."; older releases "1st", "2nd").
    _sig("autograd-nan", r"Function '\w+' returned nan values in its \d+(?:st|nd|rd|th) output",
         "Autograd's anomaly detection (torch.autograd.set_detect_anomaly or detect_anomaly) stopped the backward "
         "pass: the backward function it names produced NaN gradients, so the loss or an operation before it is "
         "numerically unstable (log or sqrt of 0, a division by about 0, pow of a negative base, an fp16 overflow, "
         "a learning rate that diverged).",
         "Read the forward traceback anomaly mode printed above it (the operation's line) and guard that operation "
         "(an eps or clamp in log, sqrt and divisions, log_softmax instead of log(softmax)), check the inputs for "
         "NaN/inf, lower the learning rate or clip gradients; anomaly mode slows training, turn it off once found. "
         "A restart from the same checkpoint meets the same batch.", retry=False),
    # DTensor's sharding propagation (torch/distributed/tensor/_sharding_prop.py, ShardingPropagator.propagate_op_
    # sharding_non_cached: f"Operator {op} does not have a sharding strategy registered."; its decomposition path:
    # f"... because {node.target} does not have a sharding strategy registered."): an op on DTensors (FSDP2's sharded
    # parameters, tensor parallel's weights) that DTensor has no rule for in this torch. The op's qualified name
    # (namespace.op.overload) is required, so prose about strategies does not match.
    _sig("dtensor-op-unsupported", r"\b\w+\.\w+(?:\.\w+)? does not have a sharding strategy registered",
         "An operation ran on DTensors (FSDP2's sharded parameters, tensor parallel's weights, distribute_tensor's "
         "output) and DTensor has no sharding rule for that operator in this torch version: DTensor runs only the "
         "ops it has a registered sharding strategy for (the message names the op, e.g. aten.view.dtype in an "
         "optimizer's step, or a custom op).",
         "Run that step on the local shard (x.to_local(), then DTensor.from_local with the same placements) or on the "
         "gathered tensor (full_tensor()), register a rule for a custom op "
         "(torch.distributed.tensor.experimental.register_sharding), or use a torch release that supports the op "
         "(DTensor's op coverage grows with each release); a restart fails the same way.", retry=False),
    # torch.distributed.device_mesh (DeviceMesh.__getitem__ / _MeshEnv._get_slice_mesh_dims): "Invalid mesh_dim_names
    # ('dp', 'cp') specified. Valid mesh_dim_names are [...]." (2.5+, KeyError); torch 2.3/2.4: "Invalid
    # mesh_dim_name ('PP',) specified. Valid mesh_dim_names should be a contiguous subsequence of (...)."; and the
    # order check's "... specified. Found mesh dim indices to slice: ... Mesh dim indices should be in ascending order."
    _sig("device-mesh-dim-name", r"Invalid mesh_dim_names? \([^()\n]{0,300}\) specified",
         "The program slices a torch DeviceMesh by dimension names (mesh['dp', 'cp'], before _flatten or to get a "
         "submesh) that the mesh does not accept: a name the mesh does not have (a typo, a name left from another "
         "mesh layout, a flattened dimension that was never created: torch 2.10's _flatten() of dimensions all of "
         "size 1 creates none, pytorch/pytorch#169381), or names out of the mesh's own order.",
         "Slice by the names the mesh has, in its order (the message lists them; print mesh.mesh_dim_names), build "
         "the mesh with the dimensions the parallel layout needs, and create a flattened name before using it (with "
         "torch 2.10, not from dimensions that are all of size 1, or upgrade); a restart fails the same way.",
         retry=False),
    # torch.distributed.device_mesh (DeviceMesh.get_group, get_local_rank): "Found the DeviceMesh have 2 dimensions",
    # "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1." (a tuple of strings in 2.4-2.9, one
    # sentence in later releases).
    _sig("device-mesh-group-dim", r"Optional kwarg `?mesh_dim`? needs to be specified when device_mesh\.ndim > 1",
         "Code asked a torch DeviceMesh of two or more dimensions (HSDP's replicate x shard, FSDP with tensor "
         "parallel) for its process group or local rank without naming the dimension (mesh.get_group() with no "
         "mesh_dim): code written for a one-dimensional mesh (a state-dict loader, a quantisation library's "
         "all-reduce such as torchao float8's amax) was given a 2-D mesh.",
         "Name the dimension (mesh.get_group('dp_shard') or an index, mesh.get_all_groups() for all of them), or use "
         "the group the operation needs (the default group for a broadcast to every rank); update the library that "
         "calls it (its release that supports HSDP); a restart fails the same way.", retry=False),
    # FSDP2 in torch 2.4 (pytorch/pytorch#129519, torch/distributed/_composable/fsdp/_fsdp_param.py): a state_dict of
    # parameters sharded over a 2-D mesh (FSDP + tensor parallel) raised this until strided sharding (#129627).
    _sig("fsdp2-2d-state-dict", r"2D state_dict is under development",
         "The model is sharded with FSDP2 (fully_shard) over a 2-D mesh (FSDP with tensor parallel, or HSDP in torch "
         "2.4.0) and its state_dict was asked for (distributed checkpoint's save, get_model_state_dict): torch 2.4 "
         "refuses it on purpose until strided sharding is supported (pytorch/pytorch#129519, tracked in #129627).",
         "Use a torch release that supports it (2.5 or newer; HSDP's refusal was lifted by pytorch/pytorch#131320), "
         "or checkpoint without the 2-D layout (FSDP only) until then; a restart fails the same way.", retry=False),
    # DDP's reducer (torch/csrc/distributed/c10d/reducer.cpp) with static_graph: a parameter's hook fired in an
    # iteration where the recorded graph says it is unused ("Your training graph has changed in this iteration, ...
    # this is not compatible with static_graph set to True."), or the prior iteration's reduction is unfinished
    # ("Expected to have finished reduction in the prior iteration ... static_graph set to True.").
    _sig("ddp-static-graph", r"not compatible with static_graph set to True",
         "DistributedDataParallel runs with a static graph (static_graph=True, or model._set_static_graph()), which "
         "records in the first iterations which parameters get gradients and expects the same every iteration, and "
         "this iteration's graph differs: a parameter used in one iteration and not in another (a branch taken per "
         "batch or per modality, a head without a loss in some batches, parts frozen or unfrozen during training).",
         "Turn the static graph off (static_graph=False; remove the _set_static_graph() call), with "
         "find_unused_parameters=True if some parameters go unused, or make every iteration use the same parameters "
         "(a zero-weighted loss on the unused branch); a restart fails the same way.", retry=False),
    # torch 2.5's c10d socket code (torch/csrc/distributed/c10d/socket.cpp, fmt::formatter<addrinfo>::format: "failed
    # to format addr, unknown family={}", a DistNetworkError) threw while formatting an address for a log line, on an
    # addrinfo whose family was not set; fixed by pytorch/pytorch#137745 (torch 2.6).
    _sig("c10d-format-addr", r"failed to format addr, unknown family=\d+",
         "A bug of torch 2.5's c10d networking code (socket.cpp): formatting an address for a log or error line "
         "throws 'failed to format addr, unknown family=0' for an address whose family is not set, so a store "
         "connection that has to retry (the master not listening yet, a slow node), which torch 2.4 retried quietly, "
         "fails the rank instead (fixed by pytorch/pytorch#137745, in torch 2.6).",
         "Use torch 2.6 or newer (or stay on 2.4); with 2.5, start the rank that hosts the store (rank 0, MASTER_ADDR) "
         "before the others so that no connection has to retry; a restart on the same torch can fail the same way.",
         retry=False),
    # Round 74, from Megatron-LM's source (no log yet; NVIDIA/Megatron-LM main of 2026-08): validate_args's own refusals
    # (megatron/training/arguments.py; yaml_arguments.py's copies), the microbatch calculator's and the loader's.
    # megatron/core/num_microbatches_calculator.py: ConstantNumMicroBatchesCalculator's "global batch size (G) is not
    # divisible by micro batch size (M) times data parallel size (D)"; the ramp-up's "current global batch size (G) is
    # not divisible by micro_batch_size (M) * data_parallel_size (D)". Not the eval batch's check (another option).
    _sig("megatron-global-batch", r"global batch size \(\d+\) is not divisible by micro[ _]batch[ _]size \(\d+\) "
         r"(?:times|\*) data[ _]parallel[ _]size \(\d+\)",
         "Megatron splits each global batch into micro-batches over the data-parallel ranks, so --global-batch-size "
         "must be a multiple of --micro-batch-size x the data-parallel size (the world size divided by tensor x "
         "pipeline x context parallel size), and it is not (with --rampup-batch-size, one of the ramp's sizes is not).",
         "Set --global-batch-size to a multiple of micro-batch-size x data-parallel size (or change the micro-batch "
         "size or the GPU count so that it is; with a ramp, choose its start and increment as such multiples); a "
         "restart fails the same way.", retry=False),
    # arguments.py validate_args: "Using tensor model parallelism or context parallelism require setting the environment
    # variable CUDA_DEVICE_MAX_CONNECTIONS to 1" (GPUs before Blackwell); older and yaml_arguments.py: "Using sequence
    # parallelism requires setting ...". Not tensor_parallel/layers.py's warning ("it is recommended to set ... to 1
    # for maximum speedup") nor validate_args's FSDP and MoE warnings ("... to 1 while ...", "... to 1 to maximize").
    _sig("megatron-cuda-max-connections", r"Using [\w /-]{1,60} requires? setting the environment variable "
         r"CUDA_DEVICE_MAX_CONNECTIONS to 1(?![ \w])",
         "Megatron refuses tensor, context or sequence parallelism on GPUs before Blackwell unless every rank runs "
         "with CUDA_DEVICE_MAX_CONNECTIONS=1 (one hardware queue, so its communication kernels are scheduled before "
         "the GEMMs they overlap with), and the variable is not set to 1 in the ranks' environment.",
         "Export CUDA_DEVICE_MAX_CONNECTIONS=1 in the environment every rank is started with (the launch script, "
         "the scheduler's job script, or the launcher's exported variables on every node), or run without tensor "
         "and context parallelism; a restart fails the same way.", retry=False),
    # arguments.py validate_args under --use-torch-fsdp2: "FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value large
    # than one" (sic): the opposite of the check above.
    _sig("megatron-fsdp-max-connections", r"FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value larg\w* than one",
         "Megatron's Torch-FSDP2 path (--use-torch-fsdp2) refuses CUDA_DEVICE_MAX_CONNECTIONS=1, which the ranks' "
         "environment sets (often left from a tensor/sequence-parallel launch script, which needs it).",
         "Unset CUDA_DEVICE_MAX_CONNECTIONS (or set it above 1, e.g. 8) for the FSDP run on every node, or use "
         "Megatron's distributed optimizer instead of --use-torch-fsdp2 where tensor parallelism needs it at 1; a "
         "restart fails the same way.", retry=False),
    # arguments.py validate_args: --tp-comm-overlap without sequence parallelism (which validate_args also turns off
    # when the tensor-parallel size is 1).
    _sig("megatron-tp-overlap-sp", r"Tensor parallel communication/GEMM overlap can happen only when sequence "
         r"parallelism is enabled",
         "Megatron's --tp-comm-overlap (Transformer Engine's overlap of tensor-parallel communication with GEMMs) "
         "needs sequence parallelism, and it is off: --sequence-parallel is not given, or the tensor-parallel size "
         "is 1, for which Megatron turns sequence parallelism off itself.",
         "Add --sequence-parallel with a tensor-parallel size above 1, or drop --tp-comm-overlap; a restart fails the "
         "same way.", retry=False),
    # arguments.py validate_args: context parallelism splits each sequence into 2 x CP chunks (load balancing).
    _sig("megatron-cp-seq-length", r"seq-length should be a multiple of 2 \* context-parallel-size",
         "Megatron's context parallelism splits each sequence into 2 x --context-parallel-size chunks (two per rank, "
         "for load balance under the causal mask), so --seq-length must be a multiple of 2 x CP, and it is not.",
         "Set --seq-length to a multiple of 2 x context-parallel-size (4096 with CP 2, 4 or 8), or choose a "
         "context-parallel size that fits it; a restart fails the same way.", retry=False),
    # arguments.py validate_args (and yaml_arguments.py): the experts spread evenly over the expert-parallel ranks.
    _sig("megatron-ep-experts", r"Number of experts should be a multiple of expert model parallel[_ ]size",
         "Megatron places an equal number of MoE experts on each expert-parallel rank, so --num-experts must be a "
         "multiple of --expert-model-parallel-size, and it is not.",
         "Use an expert-model-parallel size that divides the number of experts (64 experts: 2, 4, 8, ...); a restart "
         "fails the same way.", retry=False),
    # arguments.py validate_args: --overlap-param-gather's own two requirements. Not the checks of
    # --overlap-param-gather-with-optimizer-step (another option, other requirements).
    _sig("megatron-overlap-param-gather", r"--overlap-param-gather only supported with distributed optimizer|"
         r"Must use --overlap-param-gather with --overlap-grad-reduce",
         "Megatron's --overlap-param-gather overlaps the all-gather of the distributed optimizer's updated "
         "parameters with the next forward, so it needs the distributed optimizer (--use-distributed-optimizer, or "
         "Megatron FSDP) and --overlap-grad-reduce, and one of them is missing.",
         "Add --use-distributed-optimizer and --overlap-grad-reduce, or drop --overlap-param-gather; a restart fails "
         "the same way.", retry=False),
    # arguments.py validate_args: the position table is shorter than the sequence.
    _sig("megatron-max-position", r"max_position_embeddings \(\d+\) must be greater than or equal to "
         r"seq_length \(\d+\)",
         "Megatron's --max-position-embeddings (the length of the position-embedding table, the longest sequence "
         "the model is built for) is below --seq-length.",
         "Set --max-position-embeddings to at least --seq-length (for a pretrained model, its own maximum; a longer "
         "sequence needs a model whose positions extend to it, e.g. RoPE scaling), or lower --seq-length; a restart "
         "fails the same way.", retry=False),
    # megatron/training/checkpointing.py (_load_base_checkpoint): a torch_dist checkpoint directory met by a run that
    # reads only the legacy format.
    _sig("megatron-dist-ckpt-flag", r"Detected load from a distributed checkpoint, but neither --use-dist-ckpt nor "
         r"--auto-detect-ckpt-format is set",
         "The checkpoint in --load was saved in Megatron's distributed format (torch_dist: a directory of shards and "
         "metadata), and this run reads the legacy per-rank format: neither --use-dist-ckpt (--ckpt-format "
         "torch_dist) nor --auto-detect-ckpt-format is given.",
         "Add --auto-detect-ckpt-format (or --ckpt-format torch_dist / --use-dist-ckpt in older releases) to the "
         "command that loads it; a restart fails the same way.", retry=False),
    # Round 125: Megatron's validate_args (megatron/training/arguments.py; yaml_arguments.py the same words) asserts
    # sequence parallelism for MoE with tensor parallelism ("When using MoE and tensor parallelism, sequence parallelism
    # must be used."); ROCm/Megatron-LM#85: that tree ran it for dense models too. Not model_parallel_config.py's
    # warnings.warn ("When using expert parallelism and tensor parallelism for training, sequence parallelism must be
    # used"), which does not stop a run.
    _sig("megatron-moe-sequence-parallel", r"When using MoE and tensor parallelism, sequence parallelism must be used",
         "Megatron's argument check refused the run: an MoE model with tensor parallelism larger than 1 must also use "
         "sequence parallelism (the MoE layers' token dispatch expects the sequence split over the tensor-parallel "
         "ranks), and --sequence-parallel is not set. Some trees (ROCm's Megatron-LM fork before its fix) make the "
         "same check for dense models as well.",
         "Add --sequence-parallel (SEQ_PARALLEL=1 in the example scripts), or run with --tensor-model-parallel-size "
         "1; for a dense model, a tree that still asserts lacks the MoE condition on the check (ROCm/Megatron-LM#85): "
         "update it or turn sequence parallelism on. A restart fails the same way.", retry=False),
    # Round 125: NeMo Automodel's MoE state-dict adapter (components/moe/state_dict_utils.py, get_expert_slice_for_rank:
    # `assert "ep" in device_mesh.mesh_dim_names, "ep mesh dimension not found"`), met with ep_size 1 before
    # NVIDIA-NeMo/Automodel#3397.
    _sig("automodel-ep-mesh-missing", r"AssertionError: ep mesh dimension not found",
         "NeMo Automodel's MoE checkpoint conversion expects the experts on an expert-parallel device mesh (an 'ep' "
         "axis); with ep_size 1 no such mesh is built (the experts are sharded by FSDP alone), and releases before "
         "NVIDIA-NeMo/Automodel#3397 (August 2026) fail this assertion when they load or save any MoE checkpoint.",
         "Update NeMo Automodel to a version with #3397 (EP-free expert state dicts), or set distributed.ep_size "
         "larger than 1 (it must divide the number of experts and the data-parallel ranks). A restart fails the same "
         "way.", retry=False),
    # Round 165: DTensor's sharding propagation (torch/distributed/tensor/_dispatch.py,
    # _propagate_op_sharding_dispatch_slow_path: "{e}\nSharding propagation failed for {op}({specs}) on {mesh}") of a
    # matrix product whose shapes do not meet: torch's meta check (torch/_meta_registrations.py, addmm/mm/bmm:
    # "a and b must have same reduction dim, but got [..] X [..]"; "mat1 and mat2 shapes cannot be multiplied").
    # The DTensor specs are global shapes: a tensor-parallel plan whose layouts do not chain.
    _sig("tp-plan-layout-mismatch", r"(?:a and b must have same reduction dim, but got|mat1 and mat2 shapes cannot be "
         r"multiplied)[^\n]{0,160}\n(?:(?:\[rank\d+\]:)?[ \t]*\n)?(?:\[rank\d+\]:)?[ \t]*Sharding propagation failed "
         r"for aten\.(?:addmm|mm|bmm|baddbmm|matmul|linear)\b|"
         # torch 2.2-2.5's words (_dispatch.py/sharding_prop.py): "Sharding propagation failed on op {op}.\n[Input
         # schema: {schema}.\n]Error: {e}", the shape error last.
         r"Sharding propagation failed on op (?:Op\(op=)?aten\.(?:addmm|mm|bmm|baddbmm|matmul|linear)\b"
         r"(?:(?!Sharding propagation failed)[^\n])*\n(?:(?:\[rank\d+\]:)?[ \t]*Input schema: "
         r"(?:(?!Sharding propagation failed)[^\n])*\n)?(?:\[rank\d+\]:)?[ \t]*Error: (?:a and b must have same "
         r"reduction dim|mat1 and mat2 shapes cannot be multiplied)",
         "A matrix product on DTensors (tensor parallelism) got operands whose global shapes do not meet. Under "
         "parallelize_module the plan's layouts do not chain: a ColwiseParallel layer returns its local shard (a "
         "plain tensor, use_local_output=True) and the next layer also ColwiseParallel (or SequenceParallel) takes "
         "that shard as the whole, replicated input, where a RowwiseParallel (input_layouts=Shard(-1)) belongs; or "
         "the input_layouts/output_layouts of neighbouring layers disagree; or the model reshapes activations with "
         "the global sizes (heads, hidden) where the local shard's apply.",
         "Pair each ColwiseParallel with a following RowwiseParallel (the attention's q/k/v colwise and its output "
         "projection rowwise, an MLP's up colwise and down rowwise), or give the layer the layouts it receives "
         "(input_layouts=Shard(-1), output_layouts=Replicate() where a whole output is needed); divide head and hidden "
         "counts by the tensor-parallel size in the module's reshapes. A restart fails the same way.", retry=False),
)
