"""Round 88's rules (issue 45), from FSDP training failures (torch FSDP and FSDP2, accelerate's FSDP plugin, the HF
Trainer's --fsdp, TRL's and LLaMA-Factory's preference trainers): FSDP refusing to offload full parameters to the CPU on
a single GPU (`offload_to_cpu=True and NO_SHARD is not supported yet`: NO_SHARD at world size 1, hit by the checkpoint
save), FSDP's state-dict hook missing an original parameter's name (`FSDP assumes X is in the state_dict but the
state_dict only has ...`), and a preference or distillation trainer's reference/teacher model left on the CPU under FSDP
(the trainer's reference-forward frames, then torch's device check naming the CPU). A second wording of each, in
another version's or caller's words than the corpus case it was written from, and near misses that must not be read as
it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("fsdp-no-shard-offload", "fsdp-state-dict-fqn-missing", "fsdp-ref-model-cpu")

_TB = "Traceback (most recent call last):\n"
_CPU = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
        "(when checking argument for argument index in method wrapper_CUDA__index_select)\n")


@pytest.mark.parametrize("text,expected", [
    # torch's summon_full_params on one GPU (fully_sharded_data_parallel.py -> _unshard_param_utils.py), rank-prefixed
    ("[rank0]: " + _TB + '[rank0]:   File "gen.py", line 40, in <module>\n'
     "[rank0]:     with FSDP.summon_full_params(model, offload_to_cpu=True, rank0_only=True):\n"
     '[rank0]:   File "/usr/lib/python3/dist-packages/torch/distributed/fsdp/_unshard_param_utils.py", line 140, in '
     "_validate_unshard_params_args\n[rank0]:     raise NotImplementedError(\n"
     "[rank0]: NotImplementedError: offload_to_cpu=True and NO_SHARD is not supported yet\n", "fsdp-no-shard-offload"),
    # the message as other threads' titles give it (LLM-Shearing#23 under Composer, DPO#91 on one A100)
    ("NotImplementedError: offload_to_cpu=True and NO_SHARD is not supported yet\n", "fsdp-no-shard-offload"),
    # the assertion as torch's f-string reads before it is filled in (RLinf#119's title)
    ("AssertionError: FSDP assumes {fqn} is in the state_dict but the state_dict only has {state_dict.keys()}.\n",
     "fsdp-state-dict-fqn-missing"),
    # torch 2.x's one line under a rank prefix, a LoRA model's name (_state_dict_utils.py's format)
    ("[rank3]: AssertionError: FSDP assumes base_model.model.model.layers.0.self_attn.q_proj.lora_A.default.weight is "
     "in the state_dict but the state_dict only has odict_keys(['base_model.model.model.layers.0._flat_param']). "
     "prefix=base_model.model.model.layers.0., module_name=self_attn.q_proj.lora_A.default, param_name=weight "
     "rank=3.\n", "fsdp-state-dict-fqn-missing"),
    # TRL's KTOTrainer (kto_trainer.py get_batch_loss_metrics: self.forward(self.ref_model, batch))
    (_TB + '  File "/opt/conda/lib/python3.10/site-packages/trl/trainer/kto_trainer.py", line 1239, in '
     "get_batch_loss_metrics\n    ) = self.forward(self.ref_model, batch)[:5]\n"
     '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py", line 2264, in embedding\n'
     "    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\n" + _CPU,
     "fsdp-ref-model-cpu"),
    # TRL's GKD teacher (gkd_trainer.py compute_loss: self.teacher_model(...)), torch 2.6+'s wording of the check
    ("[rank2]: " + _TB + '[rank2]:   File "/usr/lib/python3/dist-packages/trl/trainer/gkd_trainer.py", line 229, in '
     "compute_loss\n[rank2]:     outputs_teacher = self.teacher_model(\n"
     "[rank2]: RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from "
     "other tensors on cuda:2 (when checking argument in method wrapper_CUDA__index_select)\n", "fsdp-ref-model-cpu"),
    # LLaMA-Factory's own DPO trainer (its compute_reference_log_probs), the error line of LLaMA-Factory#4608
    ("[rank1]: " + _TB + '[rank1]:   File "/src/llamafactory/train/dpo/trainer.py", line 261, in '
     "compute_reference_log_probs\n[rank1]:     reference_chosen_logps, reference_rejected_logps, *_ = "
     "self.concatenated_forward(\n[rank1]: RuntimeError: Expected all tensors to be on the same device, but found at "
     "least two devices, cpu and cuda:1! (when checking argument for argument index in method "
     "wrapper_CUDA__index_select)\n", "fsdp-ref-model-cpu"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # the same validation's other refusals (_unshard_param_utils.py _validate_unshard_params_args) and its warning
    ("NotImplementedError: writeback=True and rank0_only=True is not supported yet\n", "fsdp-no-shard-offload"),
    ("NotImplementedError: with_grads=True, use_orig_params=False, offload_to_cpu=True is not supported yet\n",
     "fsdp-no-shard-offload"),
    ("UserWarning: offload_to_cpu=True and rank0_only=False may result in theunsharded parameters being redundantly "
     "copied to CPU memory for GPUs sharing the same CPU memory, which risks CPU OOM.\n"
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n", "fsdp-no-shard-offload"),
    # loading, not the state-dict hook: nn.Module.load_state_dict's strict check, DCP's planner (default_planner.py),
    # DCP's filesystem reader (Lightning#20373), FSDP's sharded-state-dict precondition (NEFTune#2)
    ("RuntimeError: Error(s) in loading state_dict for FullyShardedDataParallel:\n\tMissing key(s) in state_dict: "
     "\"_fsdp_wrapped_module.lm_head.weight\".\n", "fsdp-state-dict-fqn-missing"),
    ("RuntimeError: Missing key in checkpoint state_dict: model.embed_tokens.weight.\n", "fsdp-state-dict-fqn-missing"),
    ("AssertionError: req MetadataIndex(fqn='model.model.model.embed_tokens.weight', offset=torch.Size([0, 0]), "
     "index=0) mismatch sizes torch.Size([1571]) vs torch.Size([1571, 3072])\n", "fsdp-state-dict-fqn-missing"),
    ("RuntimeError: ``sharded_state_dict`` can only be used when parameters are flatten and sharded.\n",
     "fsdp-state-dict-fqn-missing"),
    # the CPU/GPU mismatch in the policy's own forward: no reference or teacher frame
    (_TB + '  File "/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", line 3675, in training_step\n'
     "    loss = self.compute_loss(model, inputs)\n" + _CPU, "fsdp-ref-model-cpu"),
    # the reference forward meeting two GPUs (ms-swift#2044: DPO with a model spread over three GPUs), and ZeRO-3's
    # empty placeholder in it: other causes
    (_TB + '  File "/usr/lib/python3/dist-packages/trl/trainer/dpo_trainer.py", line 809, in compute_ref_log_probs\n'
     "    ref_model_output = self.concatenated_forward(self.ref_model, batch)\n"
     "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and "
     "cuda:0!\n", "fsdp-ref-model-cpu"),
    (_TB + '  File "/usr/lib/python3/dist-packages/trl/trainer/dpo_trainer.py", line 809, in compute_ref_log_probs\n'
     "    ref_model_output = self.concatenated_forward(self.ref_model, batch)\n"
     "RuntimeError: The size of tensor a (0) must match the size of tensor b (4096) at non-singleton dimension 1\n",
     "fsdp-ref-model-cpu"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_a_cpu_mismatch_without_the_reference_frames_stays_device_mismatch():
    assert sig(_TB + '  File "train.py", line 9, in step\n    out = model(batch)\n' + _CPU) == "device-mismatch"


def test_the_evidence_is_the_error_not_the_frame():
    from dscluster import explain
    found = explain.explain(_TB + '  File "/x/trl/trainer/dpo_trainer.py", line 809, in compute_ref_log_probs\n'
                            "    ref_model_output = self.concatenated_forward(self.ref_model, batch)\n" + _CPU)
    assert found.signature == "fsdp-ref-model-cpu"
    assert found.evidence == _CPU.strip()


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
