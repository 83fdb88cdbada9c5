"""Round 125's rules (issue 45), from mixture-of-experts training threads (DeepSpeed MoE, NeMo Automodel, Megatron,
FastMoE, torchtitan, pith-train): a MoE model's expert optimizer states DeepSpeed cannot open, a torch.distributed
checkpoint without the experts under the names an expert-parallel rank asks for, Megatron's MoE check that tensor
parallelism comes with sequence parallelism, Automodel's state-dict adapter asserting an expert-parallel mesh at
ep_size 1, NCCL's own check of a call given no communicator (FastMoE's distributed experts without a process group),
and torch's grouped GEMM missing from a ROCm build: a second wording of each, in another version's or caller's words
than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("ds-moe-optim-states-missing", "moe-expert-ckpt-reshard", "megatron-moe-sequence-parallel",
       "automodel-ep-mesh-missing", "nccl-null-comm", "grouped-mm-unsupported")


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed 0.10+'s engine.py: the checkpoint engine's load of the expert-parallel rank's file, torch's
    # FileNotFoundError naming it (engine._get_optimizer_ckpt_name's format), without the frames
    ("FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/moe/global_step500/expp_rank_3_mp_rank_01_"
     "optim_states.pt'\n", "ds-moe-optim-states-missing"),
    # DeepSpeed 0.7-0.9's torch.load of optim_load_path in _load_checkpoint under torchrun's rank prefix (the
    # traceback's frames as torch 2.x prints them)
    ("[rank0]:   File \"/usr/lib/python3/dist-packages/deepspeed/runtime/engine.py\", line 2703, in _load_checkpoint\n"
     "[rank0]:     optim_checkpoint = torch.load(optim_load_path,\n"
     "[rank0]:   File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 791, in load\n"
     "[rank0]:     with _open_file_like(f, 'rb') as opened_file:\n"
     "[rank0]:   File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 271, in _open_file_like\n"
     "[rank0]:     return _open_file(name_or_buffer, mode)\n", "ds-moe-optim-states-missing"),
    # torch.distributed.checkpoint's planner for a per-expert key (experts numbered per rank, loaded at another EP
    # size: the KempnerForge#202 shape)
    ("RuntimeError: Missing key in checkpoint state_dict: model.layers.0.mlp.experts.12.down_proj.weight.\n",
     "moe-expert-ckpt-reshard"),
    # Megatron's yaml_arguments.py, the same assertion under the YAML config's argument names
    ("  File \"/opt/megatron-lm/megatron/training/yaml_arguments.py\", line 338, in validate_yaml\n"
     "    assert args.model_parallel.sequence_parallel, \\\n"
     "AssertionError: When using MoE and tensor parallelism, sequence parallelism must be used.\n",
     "megatron-moe-sequence-parallel"),
    # Automodel's assertion on another rank, from the save path (to_hf of the same adapter), under a rank prefix
    ("[rank5]:   File \"/opt/Automodel/nemo_automodel/components/moe/state_dict_utils.py\", line 57, in "
     "get_expert_slice_for_rank\n"
     "[rank5]:     assert \"ep\" in device_mesh.mesh_dim_names, \"ep mesh dimension not found\"\n"
     "[rank5]: AssertionError: ep mesh dimension not found\n", "automodel-ep-mesh-missing"),
    # a recent NCCL's WARN format (file path and function before NCCL WARN), another collective's name
    ("node3:9921:9921 [2] nccl/src/misc/argcheck.cc:32 (PtrCheck) NCCL WARN Bcast : comm argument is NULL\n"
     "node3:9921:9921 [2] NCCL INFO nccl/src/enqueue.cc:2214 -> 4\n", "nccl-null-comm"),
    # transformers' grouped experts (torch._grouped_mm) on an MI300X, the same ATen message from another caller
    ("  File \"/venv/lib/python3.12/site-packages/transformers/integrations/moe.py\", line 211, in "
     "grouped_mm_experts_forward\n"
     "    out = torch._grouped_mm(x, w, offs=offsets)\n"
     "RuntimeError: grouped gemm is not supported on ROCM\n", "grouped-mm-unsupported"),
])
def test_second_wordings(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # hiyouga/LlamaFactory#8098: ZeRO's own partition file missing (zero_pp_rank_N), not the MoE experts'
    ("[rank4]: FileNotFoundError: [Errno 2] No such file or directory: '/output/checkpoint-200/global_step200/"
     "zero_pp_rank_4_mp_rank_00_optim_states.pt'\n", "ds-moe-optim-states-missing"),
    # the expert file opened but unreadable (a save cut short): torch.load's unpickler, not _open_file_like
    ("  File \"/usr/local/lib/python3.8/dist-packages/deepspeed/runtime/engine.py\", line 2489, in _load_checkpoint\n"
     "    optim_checkpoint = torch.load(optim_load_path,\n"
     "  File \"/usr/local/lib/python3.8/dist-packages/torch/serialization.py\", line 795, in load\n"
     "    return _legacy_load(opened_file, map_location, pickle_module, **pickle_load_args)\n"
     "  File \"/usr/local/lib/python3.8/dist-packages/torch/serialization.py\", line 1002, in _legacy_load\n"
     "    magic_number = pickle_module.load(f, **pickle_load_args)\n"
     "_pickle.UnpicklingError: invalid load key, 'v'.\n", "ds-moe-optim-states-missing"),
    # NVIDIA-NeMo/Automodel#2071: an optimizer state's key of a MoE gate that never had a gradient, not the experts
    ("RuntimeError: Missing key in checkpoint state_dict:\n    optim.state.model.layers.1.mlp.gate.weight.step\n",
     "moe-expert-ckpt-reshard"),
    # load_state_dict's report (a plain state dict, not torch.distributed.checkpoint's planner)
    ("RuntimeError: Error(s) in loading state_dict for MixtralForCausalLM:\n\tMissing key(s) in state_dict: "
     "\"model.layers.0.block_sparse_moe.experts.0.w1.weight\".\n", "moe-expert-ckpt-reshard"),
    # a dense layer's key missing from a torch.distributed.checkpoint
    ("RuntimeError: Missing key in checkpoint state_dict: model.layers.0.self_attn.q_proj.weight.\n",
     "moe-expert-ckpt-reshard"),
    # Megatron-Core's model_parallel_config.py warns (warnings.warn) and the run goes on
    ("/opt/megatron-lm/megatron/core/model_parallel_config.py:562: UserWarning: When using expert parallelism and "
     "tensor parallelism for training, sequence parallelism must be used\n", "megatron-moe-sequence-parallel"),
    # Automodel's other mesh assertion (create_dtensor_from_local), another check than the 'ep' axis's
    ("AssertionError: Expected mesh dimension names to contain only 'ep', 'ep_shard', 'ep_replicate', got "
     "('dp_shard_cp',)\n", "automodel-ep-mesh-missing"),
    # NCCL's PtrCheck of a NULL buffer: the communicator is there
    ("gpu2:811:811 [1] misc/argcheck.cc:30 NCCL WARN AllReduce : sendbuff argument is NULL\n", "nccl-null-comm"),
    # CommCheck's other refusal, a communicator overwritten or freed
    ("gpu2:811:811 [1] NCCL WARN Error: corrupted comm object detected\n", "nccl-null-comm"),
    # vLLM with FlashInfer's MXFP4 MoE kernel on a GPU it does not cover
    ("RuntimeError: MXFP4 grouped gemm is not supported on this device ... kernel does not support current device "
     "cuda\n", "grouped-mm-unsupported"),
    # ModelLink's argument check (grouped GEMM with MC2 on Ascend), not ATen's
    ("AssertionError: Moe Grouped Gemm is not supported with mc2 in MOE model.\n", "grouped-mm-unsupported"),
    # a test suite's skip reason (vLLM's cutlass MoE tests)
    ("SKIPPED [8] tests/kernels/moe/test_cutlass_moe.py:219: Grouped gemm is not supported on this GPU type.\n",
     "grouped-mm-unsupported"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_an_unreadable_expert_file_is_a_corrupt_checkpoint():
    assert sig("    optim_checkpoint = torch.load(optim_load_path,\n"
               "_pickle.UnpicklingError: invalid load key, 'v'.\n") == "ckpt-corrupt"


def test_a_dense_key_stays_a_model_mismatch():
    assert sig("RuntimeError: Missing key in checkpoint state_dict: model.layers.0.self_attn.q_proj.weight.\n") == \
        "ckpt-model-mismatch"


def test_translated_and_no_restart():
    translated_and_final(NEW)
