"""Failure signatures from the threads of RLHF and preference-training stacks run on several GPUs (round 39 of issue
45: TRL's trainers under DeepSpeed ZeRO-3, OpenRLHF's and veRL's vLLM engines as Ray actors, H2O LLM Studio's RLHF
loop): TRL's refusal to copy a ZeRO-3 model into a reference model, TRL's reference-model sync meeting ZeRO-3's empty
placeholders, DeepSpeed's DataLoader read as torch's, and vLLM's V1 engine without the model_executor that RLHF code
reaches into. Each pattern is the wording of the component that prints it (TRL's modeling_base.py and trainer/utils.py,
Python's AttributeError on DeepSpeed's and vLLM's classes), never one log's. sigmessages.py places this table with
PyTorch's own, before DeepSpeed's broad `not compatible with ZeRO` refusal (ds-incompatible) and the last resorts.
The real logs they are measured on are tests/data/failures (tests/unit/test_failure_corpus.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# torch's broadcasting refusal where one side has size 0: a ZeRO-3 parameter's placeholder (empty until gathered).
_SIZE_ZERO = r"The size of tensor a \(0\) must match the size of tensor b \([1-9]\d*\)|" \
             r"The size of tensor a \([1-9]\d*\) must match the size of tensor b \(0\)"

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
         r"RuntimeError: (?:" + _SIZE_ZERO + ")",
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
)
