"""Failure signatures from the threads of RLHF and preference-training stacks run on several GPUs (round 39 of issue
45: TRL's trainers under DeepSpeed ZeRO-3, OpenRLHF's and veRL's vLLM engines as Ray actors, H2O LLM Studio's RLHF
loop): TRL's refusal to copy a ZeRO-3 model into a reference model, TRL's reference-model sync meeting ZeRO-3's empty
placeholders, DeepSpeed's DataLoader read as torch's, and vLLM's V1 engine without the model_executor that RLHF code
reaches into; round 49: TRL's GRPO/RLOO batch that cannot hold whole groups of num_generations completions; round
66: TRL's vllm_mode check refusing a valid mode on the ranks other than the main one (a main-branch bug); round 88:
the reference or teacher model left on the CPU under FSDP, read from the trainer's frames before torch's device
check; round 119: the rollout's torch_memory_saver out of GPU memory (veRL with SGLang), TRL's CLI older than
vllm-serve; round 152: DeepSpeed's CPUAdam stepping GPU parameters (a reference model TRL
initialized with the training config's optimizer offload). Each pattern is the wording of the component that prints it (TRL's modeling_base.py, trainer/utils.py
and grpo_config.py, Python's AttributeError on DeepSpeed's and vLLM's classes, torch_memory_saver's csrc/utils.h),
never one log's. sigmessages.py places this table with PyTorch's own, before DeepSpeed's broad `not compatible with
ZeRO` refusal (ds-incompatible) and the last resorts.
The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import SIZE_ZERO, Signature, then
from dscluster.sigtypes import sig as _sig

RLHF_SIGNATURES: tuple[Signature, ...] = (
    # TRL's create_reference_model() (trl/models/modeling_base.py): `DeepSpeed ZeRO-3 is enabled and is not compatible
    # with `create_reference_model()`. Please instantiate your reference model directly with
    # `AutoModelForCausalLM.from_pretrained()`` (older TRL: `AutoCausalLM`). It deep-copies the policy, whose
    # parameters ZeRO-3 holds partitioned; a trainer built on TRL (ms-swift, OpenRLHF-like scripts) hits it too.
    _sig("zero3-ref-model-copy", r"is not compatible with `?create_reference_model\(\)",
         "The reference model (PPO/DPO) was made by copying the policy model with TRL's create_reference_model(), "
         "which TRL refuses under DeepSpeed ZeRO-3: ZeRO-3 keeps each parameter partitioned across the ranks, so a "
         "copy of the model would hold only empty placeholders.",
         "Load the reference model on its own (AutoModelForCausalLM.from_pretrained of the same checkpoint, passed "
         "as ref_model), let the trainer create it (ref_model=None in recent TRL), train adapters (peft) so the "
         "base model is the reference, or use ZeRO-2. Every rank fails the same way until then.", retry=False),
    # TRL's SyncRefModelCallback (trl/trainer/utils.py, `_sync_target_model`: target_param.data.mul_(1 - alpha)
    # .add_(copy_param.data, alpha=alpha)), TR-DPO's sync_ref_model: under ZeRO-3 one of the two models' parameters
    # is still the empty placeholder, and torch refuses to add a 0-sized tensor to the full weight.
    _sig("zero3-param-partitioned", r"in _sync_target_model\n(?:[^\n]*\n){1,2}?(?:\[rank\d+\]: )?"
         r"RuntimeError: (?:" + SIZE_ZERO + ")",
         "TRL's reference-model sync (sync_ref_model, SyncRefModelCallback) mixed the policy's weights into the "
         "reference model's while DeepSpeed ZeRO-3 held one of the two partitioned: a parameter not gathered is an "
         "empty placeholder (size 0), so it cannot be added to the other model's full weight.",
         "Gather both models' parameters for the sync (deepspeed.zero.GatheredParameters over the reference model's "
         "too: a TRL version whose callback does so), or turn sync_ref_model off, or use ZeRO-2 for this run. A "
         "restart fails the same way at the first sync.", retry=False),
    # Python's AttributeError on DeepSpeed's DeepSpeedDataLoader (deepspeed/runtime/dataloader.py, what
    # deepspeed.initialize(training_data=...) returns): it keeps the sampler as data_sampler and has none of torch's
    # DataLoader attributes, so code written for torch's DataLoader (sampler.set_epoch) fails on it.
    _sig("ds-dataloader-attribute", r"'DeepSpeedDataLoader' object has no attribute '(?:sampler|batch_sampler|"
         r"num_workers|drop_last|persistent_workers|prefetch_factor|generator|worker_init_fn|timeout|"
         r"multiprocessing_context)'",
         "The training code treats the data loader as torch's DataLoader, but with DeepSpeed it is DeepSpeed's "
         "DeepSpeedDataLoader (returned by deepspeed.initialize(training_data=...)), which keeps its sampler as "
         "data_sampler and has none of torch's DataLoader attributes (sampler, batch_sampler, num_workers...).",
         "Build the DataLoader yourself (torch's, with a DistributedSampler) and pass it to the loop instead of "
         "training_data=, or read DeepSpeed's loader's data_sampler; a version of the training code that handles "
         "DeepSpeed's loader. A restart fails the same way.", retry=False),
    # Python's AttributeError on vLLM's engine classes: vLLM's V1 engine (the default since 0.8) runs the model in an
    # EngineCore process; LLM.llm_engine (and its client, SyncMPClient) has no model_executor, which RLHF code
    # written for V0 reaches into for weight sync, collective_rpc or offload (vllm-project/vllm#15349, #16607).
    _sig("import-name", r"'(?:LLMEngine|SyncMPClient|AsyncMPClient)' object has no attribute 'model_executor'",
         "The RLHF code reaches into vLLM's engine (llm_engine.model_executor, for weight sync, collective_rpc or "
         "offload) as vLLM's V0 engine had it; the installed vLLM runs the V1 engine (the default since 0.8), which "
         "keeps the model executor in a separate EngineCore process: a vLLM version other than the code's.",
         "Install the vLLM version the training framework pins (its requirements), or update the framework to one "
         "written for V1; as a stopgap VLLM_ENABLE_V1_MULTIPROCESSING=0 (or VLLM_USE_V1=0 where V0 still exists) "
         "keeps the engine in-process. A restart fails the same way.", retry=False),
    # TRL's group-sampling trainers' own check of the batch (trl/trainer/grpo_config.py __post_init__, rloo_config.py,
    # the experimental minillm/sdft/sdpo configs; GRPOTrainer.__init__ before 0.16): each prompt's num_generations
    # completions must fall in one batch. 0.14-0.15: "The global train batch size (N x B) must be evenly divisible by the
    # number of generations per prompt (G)"; 0.16-0.19: "The effective train batch size (N x B x S) must be evenly
    # divisible ...", "The global eval batch size (N x B) must be evenly divisible ..."; 0.20+: "generation_batch_size
    # (X) must be divisible by num_generations (G)", "... must be divisible by the global batch size (Y)", "The global
    # eval batch size (B * N) must be divisible by the number of generations used for evaluation (G)"; and "GRPO
    # requires at least 2 generations per prompt to calculate the advantages".
    _sig("grpo-generations-batch", r"(?:global|effective) (?:train|eval) batch size \([^()\n]{1,60}\) must be evenly "
         r"divisible by the number of generations|generation_batch_size \(\d+\) must be divisible by (?:num_generations|"
         r"the global batch size)|global eval batch size \([^()\n]{1,60}\) must be divisible by the number of "
         r"generations used for evaluation|GRPO requires at least 2 generations per prompt",
         "TRL's GRPO (or RLOO) configuration refused its batch sizes: each prompt is sampled num_generations times and "
         "all its completions must fall in one batch, so the batch of completions (training processes x "
         "per_device_train_batch_size, times the steps per generation in newer TRL; per_device_eval_batch_size for "
         "evaluation) must be a multiple of num_generations, which must be at least 2. A recipe run on another number "
         "of training processes (a GPU kept for the vLLM server, fewer GPUs than the recipe's) no longer fits.",
         "Make the numbers fit: set num_generations to a valid value the message lists (a divisor of that batch, at "
         "least 2), or raise per_device_train_batch_size, gradient_accumulation_steps or generation_batch_size so that "
         "processes x per-device batch (x steps) is a multiple of num_generations. Count only the training processes, "
         "not the GPUs given to vLLM; per_device_train_batch_size counts completions, not prompts. A restart fails the "
         "same way.", retry=False),
    # TRL's own check of vllm_mode (trl/trainer/grpo_trainer.py GRPOTrainer.__init__, added by
    # huggingface/trl#3866; today trl/generation/vllm_generation.py _init_vllm and the experimental online_dpo
    # trainer): `vllm_mode must be either 'server' or 'colocate', got '{mode}'.` Read only where it refuses one of the
    # two modes it names: between #3866 and #3886 (TRL's main branch, 8-12 August 2025, before the 0.22.0 release)
    # the server branch was `if vllm_mode == "server" and accelerator.is_main_process`, so every rank but the main one
    # fell through to this error under accelerate launch with several processes (huggingface/trl#3885). A mode
    # misspelt by the user (got 'servre') is the check doing its work and not read here.
    _sig("trl-vllm-mode-nonmain", r"vllm_mode must be either 'server' or 'colocate', got '(?:server|colocate)'",
         "TRL refused a valid vllm_mode ('server' or 'colocate'): the installed TRL's own mode check is wrong, a bug "
         "of TRL's main branch between its pull requests #3866 and #3886 (August 2025, before the 0.22.0 release), "
         "where only the main process took the server-mode branch, so every other rank of a multi-process run "
         "(accelerate launch with num_processes > 1) fell through to the error.",
         "Install a TRL with the fix (a release, 0.22.0 or later, or the main branch from huggingface/trl#3886 on), "
         "or pin the commit before #3866. A restart with the same TRL fails the same way on every rank but the "
         "first.", retry=False),
    # Review 73, TRL's own refusals read from its source (huggingface/trl): DPOTrainer/KTOTrainer/BCOTrainer.__init__
    # (0.9 to today, trl/trainer and trl/experimental): the reference log-probs computed before training need the
    # reference model whole on each rank, which ZeRO-3 does not give.
    _sig("trl-precompute-ref-zero3", r"You cannot use `?precompute_ref_log_probs=True`? with Deepspeed ZeRO-3",
         "TRL's preference trainer (DPO, KTO, BCO) refused precompute_ref_log_probs=True under DeepSpeed ZeRO-3: "
         "TRL does not compute the reference log-probs ahead of training (a pass of the reference model over the "
         "whole dataset) while ZeRO-3 partitions the models.",
         "Set precompute_ref_log_probs=False in the trainer's config (the reference model then runs beside each "
         "batch), or use ZeRO-2 for this run. A restart fails the same way.", retry=False),
    # GRPOTrainer.__init__ (trl/trainer/grpo_trainer.py 0.18-0.29: "vllm_tensor_parallel_size (X) must divide world
    # size (Y) evenly."; 1.0 on trl/generation/vllm_generation.py _init_vllm: "tensor_parallel_size (X) ..."): in
    # vllm_mode="colocate" the training processes form the vLLM tensor-parallel groups.
    _sig("trl-vllm-tp-world", r"(?:vllm_)?tensor_parallel_size \(\d+\) must divide world size \(\d+\) evenly",
         "TRL's colocated vLLM (vllm_mode=\"colocate\") builds its tensor-parallel groups out of the training "
         "processes, so vllm_tensor_parallel_size must divide their number (the world size, all nodes' processes), "
         "and it does not.",
         "Set vllm_tensor_parallel_size to a divisor of the number of training processes (1, 2, 4... of "
         "accelerate launch's num_processes), or launch a number of processes it divides; or use vllm_mode=\"server\" "
         "on GPUs of its own. A restart fails the same way.", retry=False),
    # DPOTrainer/KTOTrainer/ORPO... .__init__ (0.7 to today; PPO's "`policy` and `ref_policy` cannot be the same
    # object"): the reference model passed is the policy itself.
    _sig("trl-ref-model-same", r"`(?:model|policy)` and `ref_(?:model|policy)` cannot be the same object",
         "TRL's trainer was given the policy model itself as the reference model (ref_model=model): the reference must "
         "stay fixed while the policy trains, so TRL refuses one object in both places.",
         "Omit ref_model (ref_model=None: TRL makes the reference from the policy, or with peft uses the base model "
         "with the adapters off), or load a second copy of the checkpoint (from_pretrained again) for ref_model. A "
         "restart fails the same way.", retry=False),
    # Round 88: the frozen second model's forward, in the frames the trainers print (TRL's dpo_trainer.py
    # compute_ref_log_probs -> concatenated_forward(self.ref_model, ...), older TRL's and LLaMA-Factory's
    # compute_reference_log_probs, kto_trainer.py's self.forward(self.ref_model, batch), gkd_trainer.py's
    # self.teacher_model(...)), then torch's device check naming the CPU (c10's "found at least two devices, X and Y",
    # 2.6+'s "got index is on cpu, different from other tensors on cuda:0"). Under FSDP, TRL's DPOTrainer prepared the
    # reference model with accelerator.prepare_model(evaluation_mode=True), which leaves it where it was loaded, until
    # its prepare_fsdp (huggingface/trl#2539, 0.16.0); GKD's teacher still so (trl#2580); LLaMA-Factory's DPO/KTO until
    # its FSDP support (hiyouga/LLaMA-Factory#10127). Without those frames the error stays device-mismatch.
    _sig("fsdp-ref-model-cpu", then(r"\bin compute_ref(?:erence)?_log_probs\b|\(self\.ref_model\b|"
                                    r"\bself\.teacher_model\(",
                                    r"(?P<ev>Expected all tensors to be on the same device, but (?:found at least two "
                                    r"devices, (?:cpu and cuda|cuda(?::\d+)? and cpu\b)|got \w+ is on (?:cpu, different "
                                    r"from other tensors on cuda|cuda(?::\d+)?, different from other tensors on cpu)))",
                                    r"[\s\S]"),
         "The trainer's frozen second model (the DPO/KTO reference model, a distillation teacher) ran on the CPU while "
         "the batch was on the GPU. Under FSDP the trainer prepared that model without FSDP, so it was never moved to "
         "the rank's GPU: TRL's DPOTrainer before 0.16, TRL's KTO and GKD trainers, LLaMA-Factory's DPO/KTO before "
         "its FSDP support; or the model was loaded on the CPU and passed in as ref_model / teacher_model.",
         "Use a trainer version that wraps the reference model with FSDP too (TRL >= 0.16 for DPO; a LLaMA-Factory "
         "with FSDP support for DPO/KTO), or move it to the rank's GPU once the trainer is built "
         "(trainer.ref_model.to(trainer.accelerator.device)), or train adapters with ref_model=None (the reference "
         "is the model with its adapters off), or use DeepSpeed ZeRO, whose branch prepares the reference model. A "
         "restart fails the same way.", retry=False),
    # Round 152: DeepSpeed's CPU optimizers check each parameter they step is on the CPU (deepspeed/ops/adam/cpu_adam.py
    # DeepSpeedCPUAdam.step and step_subgroup: "CPUAdam param is on {p.device} and must be 'cpu', make sure you enabled
    # 'offload_optimizer': 'cpu' in your ZeRO config."; ops/adagrad/cpu_adagrad.py "CPUAdagrad ...", ops/lion/cpu_lion.py
    # "CPULion ..."). TRL's prepare_deepspeed (trl/models/utils.py, DPO/KTO/PPO/GRPO reference, reward and teacher
    # models) passes deepspeed.initialize a copy of the trainer's config lowered to stage 0 for ZeRO-1/2, whose
    # optimizer section with offload_optimizer cpu still builds a DeepSpeedCPUAdam over GPU parameters
    # (huggingface/trl#955, fixed by trl#5916). Only that assertion's words: DeepSpeed's "Basic Optimizer =
    # DeepSpeedCPUAdam" line, transformers' "Detected ZeRO Offload and non-DeepSpeed optimizers" and torch's device
    # check are other texts.
    _sig("cpu-adam-param-on-gpu", r"\bCPU(?:Adam|Adagrad|Lion) param is on \w+(?::\d+)? and must be 'cpu'",
         "DeepSpeed's CPU optimizer (DeepSpeedCPUAdam, or its Adagrad/Lion siblings) was stepped over parameters that are "
         "on a GPU: it is made for ZeRO's optimizer offload, and the engine that ran it kept its parameters on the GPU. "
         "Two setups do this: a second, frozen model (TRL's DPO/KTO/PPO reference, reward or teacher model) initialized by "
         "the trainer with a copy of the training config at ZeRO stage 0 whose optimizer section, with offload_optimizer "
         "cpu, still builds a CPUAdam; or a config or script that builds the CPU optimizer for an engine without "
         "zero_optimization.offload_optimizer on the CPU.",
         "For a frozen reference/reward/teacher model: upgrade TRL (its prepare_deepspeed drops the optimizer and "
         "offload_optimizer from the copied config, huggingface/trl#5916), or train with ZeRO-3 or without optimizer "
         "offload. Otherwise give that engine offload_optimizer: {device: cpu} in its ZeRO config, or use a GPU optimizer "
         "(AdamW, FusedAdam) where nothing is offloaded. A restart fails the same way.", retry=False),
    # GRPOConfig.__post_init__ (trl/trainer/grpo_config.py and rloo_config.py, 0.18 to today).
    _sig("trl-generation-batch-steps", r"'?generation_batch_size'? and '?steps_per_generation'? can not be both "
         r"configured",
         "TRL's GRPO/RLOO config was given both generation_batch_size and steps_per_generation: each is computed from "
         "the other (generation_batch_size = per_device_train_batch_size x processes x steps_per_generation), so only "
         "one may be set.",
         "Set only one of generation_batch_size and steps_per_generation (check the recipe's YAML and the command "
         "line together). A restart fails the same way.", retry=False),
    # veRL's ResourcePoolManager._check_resource_available (verl/single_controller/ray/base.py, since
    # volcengine/verl#505: "Total available GPUs {available} is less than total desired GPUs {required}" and, per pool,
    # "Resource pool {name}: {gpus}*{nodes} cannot be satisfied in this ray cluster"): what the Ray cluster the driver
    # is connected to reports, against trainer.nnodes x trainer.n_gpus_per_node. Round 86 (verl#3358): ray.init()
    # without an address started a one-node Ray beside the two-node cluster.
    _sig("ray-cluster-gpus-short", r"Total available GPUs [\d.]+ is less than total desired GPUs \d+|"
         r"Resource pool \S+: \d+\*\d+ cannot be satisfied in this ray cluster",
         "veRL's trainer found fewer GPUs in the Ray cluster it is connected to than its config asks for "
         "(trainer.nnodes x trainer.n_gpus_per_node): the driver is not in the multi-node cluster (ray.init() without "
         "an address starts a Ray of its own node only), the other nodes never joined (ray start --address on each), "
         "Ray was started with fewer GPUs (--num-gpus, CUDA_VISIBLE_DEVICES), or the config asks for more than exist.",
         "Run the trainer inside the cluster: on the head node after `ray start --head`, with RAY_ADDRESS=auto (or "
         "ray.init(address=\"auto\")), or submit it with `ray job submit`; check with `ray status` that every node "
         "and GPU is listed; then set trainer.nnodes and trainer.n_gpus_per_node to what it shows. A restart fails "
         "the same way.", retry=False),
    # Round 119: torch_memory_saver (the allocator SGLang's rollout, and veRL/slime with it, uses to release and
    # resume the KV cache and weights) exits on a failed CUDA call: csrc/utils.h CURESULT_CHECK / CUDA_ERROR_CHECK,
    # "[torch_memory_saver.cpp] CUresult error: 2 (out of memory)  file=... func=..." (0.0.5 and before: "CUresult
    # error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create"), "cudaError error: 2 (out of memory)".
    # CUresult 2 is CUDA_ERROR_OUT_OF_MEMORY, cudaError 2 cudaErrorMemoryAllocation (the maintainer,
    # torch_memory_saver#4). Not other codes (result=1 on resume: an invalid value), not its warning "cuMemCreate
    # CUDA_ERROR_OUT_OF_MEMORY (may not be an issue ...)" (torch's allocator frees its cache and retries), not ROCm's
    # hipError_t lines (MI300's cu_mem_create failed on HIP's VMM size limit, torch_memory_saver#9).
    _sig("memory-saver-cuda-oom", r"\[torch_memory_saver\.cpp\] (?:CUresult error +result=2 |"
         r"(?:CUresult|cudaError) error: 2 \(out of memory\))",
         "The rollout engine's GPU memory saver (torch_memory_saver, used by SGLang's rollout in veRL and other RL "
         "trainers) could not allocate GPU memory (CUDA out of memory) for the KV cache or weights it creates or "
         "resumes, and the process exited; the other ranks then wait in a collective until it times out. The "
         "rollout's memory share did not fit beside what training holds on the same GPU.",
         "Lower the rollout's memory share (veRL: actor_rollout_ref.rollout.gpu_memory_utilization, which SGLang "
         "uses too; SGLang: mem_fraction_static), offload training state (param/optimizer offload), spread the "
         "model over more GPUs (a larger rollout tensor parallel size, more GPUs), or shorten responses/batches. "
         "A restart fails the same way.", retry=False),
    # Round 119: TRL's CLI before vllm-serve existed (trl/cli.py, TrlParser(prog="TRL CLI", usage="trl") with
    # subcommands chat, dpo, env, grpo, kto, sft; vllm-serve came with TRL 0.16): argparse's "argument command:
    # invalid choice: 'vllm-serve'" (Python 3.12.8+ lists the choices unquoted); TRL's CLI since #5124: prog "trl".
    _sig("trl-vllm-serve-missing", r"(?:TRL CLI|\btrl): error: argument command: invalid choice: '?vllm-serve\b",
         "The installed TRL is older than its vllm-serve command (TRL 0.16): `trl vllm-serve`, the vLLM generation "
         "server that GRPO's server mode (use_vllm, vllm_mode=\"server\") connects to, is not one of its CLI's "
         "commands.",
         "Upgrade TRL (pip install -U trl, 0.16 or later, with a vLLM version it supports) in the environment "
         "that runs `trl` (check `which trl` and `trl env`), then start the server again. A restart fails the "
         "same way.", retry=False),
)
