"""Near misses of the rules written in session 30 (rounds 124-129, the lead's exit-abort, and the split of sigtorch.py
and sigparallel.py into sigfsdp.py and sigpipeline.py), review 138: words another component prints, or the same
component reached by another caller, that a rule reads. No pattern read a wrong family, so none was narrowed; three
cause texts named one cause where the printing code has several, and were widened to name them, the most frequent
first (the signature each log is answered with is unchanged):
- exit-abort ("terminate called without an active exception"): libstdc++'s terminate handler for a C++ thread object
  destroyed while its thread still runs, from any library. As a rank's last words it is most often PyTorch's
  process-group threads outliving a finished script, but the same words end a run that never finished: Caffe2's
  Detectron started with NUM_GPUS larger than the machine's GPUs aborts so during setup (facebookresearch/Detectron#815,
  the poster's cause). The text said "This is PyTorch's process-group threads ... The training itself had ended"; it
  now says "Most often" and names the unfinished run, whose setting is the cause.
- pipe-rpc-not-initialized ("Current RPC agent is not set!"): torch's RpcAgent::getCurrentRpcAgent (rpc_agent.cpp,
  since pytorch/pytorch#67882 followed by "Did you initialize the RPC framework (e.g. by calling `rpc.init_rpc`)?") is
  reached by every RPC use without init_rpc, an RRef(param) list for DistributedOptimizer (#67882's script, torch's own
  test) or an rpc call (torch 1.5's INTERNAL ASSERT form), not only by Pipe. The text now names them beside Pipe.
- flash-varlen-cu-seqlens ("cu_seqlens_q must have shape (batch_size + 1)"): flash-attn's CHECK_SHAPE fails for any
  cu_seqlens of another shape, and besides packing from position_ids a 4D attention mask (batch, 1, q, k) reaching
  transformers' unpadding, which expects a 2D padding mask, makes them (QwenLM/Qwen2-Audio#51: its audio encoder's 4D
  mask under flash_attention_2; Dao-AILab/flash-attention#1857; #742, transformers 4.35). The text names it, and the
  fix its remedy (sdpa, or a 2D mask).
Looked at and kept, pinned below: nccl-null-comm (NCCL's other argcheck words: a NULL newcomm, a destroyed comm, a NULL
buffer), moe-expert-ckpt-reshard (a second wording from NVIDIA-NeMo/Automodel#2595; DCP's missing non-expert keys of
torchtitan#634 and #2622 stay ckpt-model-mismatch), allgather-dtype-mismatch (haotian-liu/LLaVA#949 under ZeRO-3, the
same words from every backend's _allgather_base). No corpus case or explain log changed its answer."""

import json

from explain_rounds import FAILURES_ZH, SRC, sig

from dscluster import explain

# --- exit-abort -------------------------------------------------------------------------------------------------------
# facebookresearch/Detectron#815 (the description, verbatim): the abort came during setup; the poster: "The problem was
# caused by NUM_GPUS setting larger than actual number of gpus."
_DETECTRON_815 = (
    "WARNING memonger.py:  55: NOTE: Executing memonger to optimize gradient memory\n"
    "[I memonger.cc:236] Remapping 59 using 9 shared blobs.\n"
    "INFO memonger.py:  97: Memonger memory optimization took 0.0249421596527 secs\n"
    "WARNING memonger.py:  55: NOTE: Executing memonger to optimize gradient memory\n"
    "[I memonger.cc:236] Remapping 59 using 9 shared blobs.\n"
    "INFO memonger.py:  97: Memonger memory optimization took 0.0228309631348 secs\n"
    "terminate called without an active exception\n"
    "Aborted\n")


def test_exit_abort_names_an_unfinished_run_beside_the_exit_race():
    exp = explain.explain(_DETECTRON_815)
    # the same family (the line cannot tell a finished script from a setup that gave up), no restart either way
    assert exp.signature == "exit-abort" and not exp.retry
    assert "Most often" in exp.cause and "had not finished" in exp.cause and "NUM_GPUS" in exp.cause
    assert "run the script again" in exp.cause  # the frequent cause stays first
    assert "number of GPUs asked for" in exp.fix
    assert exp.cause in _launch_zh() and exp.fix in _explain_zh()


def _launch_zh() -> dict:
    return json.loads((SRC / "locale" / "zh_TW" / "launch.json").read_text(encoding="utf-8"))


def _explain_zh() -> dict:
    return json.loads((SRC / "locale" / "zh_TW" / "explain.json").read_text(encoding="utf-8"))


# --- pipe-rpc-not-initialized -----------------------------------------------------------------------------------------
# torch/csrc/distributed/rpc/rpc_agent.cpp since pytorch/pytorch#67882 (TORCH_CHECK), reached by RRef(param) without
# init_rpc (the PR's DistributedOptimizer script; torch's own RPC test, assertRaisesRegex); torch 1.5's
# TORCH_INTERNAL_ASSERT form, met by a worker's rpc call before init_rpc (a tutorial's worker.py).
_RPC_CHECK = ("RuntimeError: Current RPC agent is not set! Did you initialize the RPC framework (e.g. by calling "
              "`rpc.init_rpc`)?\n")
_RPC_15 = ("RuntimeError: currentRpcAgent_ INTERNAL ASSERT FAILED at /opt/conda/conda-bld/pytorch_1587428398394/work/"
           "torch/csrc/distributed/rpc/rpc_agent.cpp:197, please report a bug to PyTorch. Current RPC agent is not set!\n")


def test_rpc_agent_unset_names_every_rpc_use_not_only_pipe():
    for text in (_RPC_CHECK, _RPC_15):
        exp = explain.explain(text)
        assert exp.signature == "pipe-rpc-not-initialized", (text, exp)
        assert "init_rpc was never called" in exp.cause and "DistributedOptimizer" in exp.cause
        assert "Pipe" in exp.cause and exp.cause in FAILURES_ZH


# --- flash-varlen-cu-seqlens ------------------------------------------------------------------------------------------
# QwenLM/Qwen2-Audio#51 (training with flash-attn; the poster traced it to Qwen2AudioEncoderLayer's (batch, 1, tgt_len,
# src_len) mask reaching modeling_flash_attention_utils.py, which expects (batch_size, seq_len)): the error line as posted.
_QWEN2_AUDIO_51 = "RuntimeError: cu_seqlens_q must have shape (batch_size + 1)\n"


def test_cu_seqlens_text_names_a_4d_mask_beside_packing():
    exp = explain.explain(_QWEN2_AUDIO_51)
    assert exp.signature == "flash-varlen-cu-seqlens"
    assert "position_ids" in exp.cause and "4D mask" in exp.cause and "Qwen2-Audio" in exp.cause
    assert "attn_implementation=\"sdpa\"" in exp.fix and "DataCollatorWithFlattening" in exp.fix
    assert exp.cause in FAILURES_ZH and exp.fix in FAILURES_ZH


# --- nccl-null-comm: NCCL's other argument checks ---------------------------------------------------------------------
def test_nccls_other_argument_checks_are_not_a_null_comm():
    # NCCL src/init.cc ncclCommInitRank: PtrCheck(newcomm, "CommInitRank", "newcomm"): the caller's out-pointer, not a
    # communicator missing: NCCL's own warning
    assert sig("node1:100:100 [0] misc/argcheck.cc:32 NCCL WARN CommInitRank : newcomm argument is NULL\n") != \
        "nccl-null-comm"
    # NVIDIA/nccl#1482 (verbatim): a communicator destroyed twice by the poster's destructor
    assert sig("    e53955024127:2088762:2088762 [1] init.cc:1969 NCCL WARN comm 0x55ec10690820 has already been "
               "destroyed\n    NCCL error: invalid argument (run with NCCL_DEBUG=WARN for details) in file xxx.cu\n") != \
        "nccl-null-comm"
    # NVIDIA/nccl#1558 (verbatim): a NULL buffer (the maintainer: "a buffer which has a NULL pointer")
    assert sig("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp"
               ":2777, invalid argument (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\n"
               "ncclInvalidArgument: Invalid value for an argument.\nLast error:\n"
               "Broadcast : sendbuff (nil) is not a valid pointer\n") != "nccl-null-comm"


# --- moe-expert-ckpt-reshard ------------------------------------------------------------------------------------------
def test_dcp_missing_keys():
    # NVIDIA-NeMo/Automodel#2595 (merged fix, verbatim): the adapter asked for per-expert MTP keys of a grouped
    # checkpoint, a second wording of the family (the expert layout)
    assert sig("RuntimeError: Missing key in checkpoint state_dict: mtp.layers.0.mlp.experts.224.down_proj.weight\n") \
        == "moe-expert-ckpt-reshard"
    # pytorch/torchtitan#634 (verbatim): a converted checkpoint without the freqs_cis buffer; torchtitan#2622: an FQN
    # changed by torch.compile inside CheckpointWrapper. No expert: the model and checkpoint differ
    assert sig("  File \"/opt/conda/envs/py_3.11/lib/python3.11/site-packages/torch/distributed/checkpoint/"
               "default_planner.py\", line 354, in create_default_local_load_plan\n"
               "    raise RuntimeError(f\"Missing key in checkpoint state_dict: {fqn}.\")\n"
               "RuntimeError: Missing key in checkpoint state_dict: model.freqs_cis.\n") == "ckpt-model-mismatch"
    assert sig("[rank0]:     raise RuntimeError(f\"Missing key in checkpoint state_dict: {fqn}.\")\n"
               "[rank0]: RuntimeError: Missing key in checkpoint state_dict: layer.weight.\n") == "ckpt-model-mismatch"


# --- allgather-dtype-mismatch -----------------------------------------------------------------------------------------
def test_allgather_dtype_under_zero3_and_its_size_sibling():
    # haotian-liu/LLaVA#949 (the title's error, under DeepSpeed's partition_parameters.py _dist_allgather_fn on V100s)
    assert sig("  File \"/mnt/afs/liwenhao/mplug_owl/lib/python3.10/site-packages/deepspeed/runtime/zero/"
               "partition_parameters.py\", line 83, in _dist_allgather_fn\n"
               "RuntimeError: output tensor must have the same type as input tensor\n") == "allgather-dtype-mismatch"
    # the size check beside it in every backend's _allgather_base (ProcessGroupNCCL, torch_npu's HCCL copy): another fault
    assert sig("RuntimeError: output tensor size must be equal to world_size times input tensor size\n") != \
        "allgather-dtype-mismatch"
