"""Near misses of the rule tables, review 46 (session 26 of issue 45, src/dscluster/sigwords.py): words another
component prints, read as DeepSpeed's refusal of a ds_config (ds-incompatible), a SIGKILL (killed) or a segmentation
fault (segfault). Megatron-LM's, SGLang's and torch inductor's refusals of their own features (an offload, a zero-size
tensor) name no ZeRO; Ray's raylet lists what MAY have killed a worker (`There are some potential root causes. (1) The
process is killed by SIGKILL by OOM killer ... (3) ... SIGSEGV or other unexpected errors.`,
src/ray/raylet/node_manager.cc HandleClientConnectionError) and says `A worker died or was killed` whatever it was;
torch's DataLoader names the signal that ended a worker (torch/csrc/DataLoader.cpp, strsignal's words). Each must not
get the rule's cause; the components' own words still do. And NCCL's `Duplicate GPU detected` (src/init.cc: two ranks
of one communicator with the same host hash and bus id) is answered with both ways it happens: the script's device
choice, or a process joining the trainer's group on the trainer's GPU (TRL's vLLM server, huggingface/trl#3158)."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

_TB = "Traceback (most recent call last):\n"
# Megatron-LM's TransformerConfig.__post_init__ (megatron/core/transformer/transformer_config.py)
_MEGATRON = (_TB + '  File "/workspace/Megatron-LM/megatron/core/transformer/transformer_config.py", line 1944, in '
             '__post_init__\n    raise ValueError("CUDA graphs not supported with CPU offloading.")\n'
             "ValueError: CUDA graphs not supported with CPU offloading.\n")
# SGLang's host KV cache (python/sglang/srt/mem_cache/memory_pool.py, get_cpu_copy)
_SGLANG = (_TB + '  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/mem_cache/memory_pool.py", line 2283, in '
           "get_cpu_copy\n    assert not self.use_hnd, (\nAssertionError: CPU KV offload indexes by slot (NHD); HND KV "
           "cache (SGLANG_USE_HND_KVCACHE) is not supported with CPU offload yet.\n")
# torch inductor's Reduction.create (torch/_inductor/ir.py), raised through torch.compile
_INDUCTOR = ("torch._inductor.exc.InductorError: AssertionError: argmax not supported for zero-dimension tensors!\n\n"
             "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting a "
             "bug to PyTorch). For even more developer context, set TORCH_LOGS=\"+dynamo\"\n")
# Ray's raylet and driver when a worker's connection drops (the words as verl and vLLM users posted them)
_RAY_DETAIL = ("Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code "
               "2. End of file. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer "
               "due to high memory usage. (2) ray stop --force is called. (3) The worker is crashed unexpectedly due to "
               "SIGSEGV or other unexpected errors.\n")
_RAY_WORKER = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
               "the problem, check the logs for the dead worker. RayTask ID: ffffffffffffffff8c22c88e5dbb3e566fc05180010"
               "00000 Worker ID: 1efd167431990baae8361c1abf2e5773e42430b6a530fd0bf81be063 Node ID: 0d733c08c95487a8952a8a"
               "6c8f44ccc8c8503b2422b7f8a40f7846ce Worker IP address: 10.0.0.5 Worker port: 10003 Worker PID: 150008 "
               + _RAY_DETAIL)
_RAY_ACTOR = ("ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\n\tclass_name: "
              "RayWorkerWrapper\n\tactor_id: 7ea542eba0c6a45ad8374aec01000000\n\tpid: 92789\n\tip: 172.17.0.8\n"
              "The actor is dead because its worker process has died. " + _RAY_DETAIL)
# torch's DataLoader: a worker ended by SIGTERM (the main process shutting it down, a scheduler's preemption)
_DL_TERM = (_TB + '  File "/usr/lib/python3/dist-packages/torch/utils/data/_utils/signal_handling.py", line 66, in '
            "handler\n    _error_if_any_worker_fails()\nRuntimeError: DataLoader worker (pid 4721) is killed by signal: "
            "Terminated. \n")

# (log, the cause it must not get, what it gets (None: any generic answer), whether a restart may help)
NEAR_MISSES = [
    (_MEGATRON, "ds-incompatible", "refused-unsupported", False),
    (_SGLANG, "ds-incompatible", "refused-unsupported", False),
    (_INDUCTOR, "ds-incompatible", "refused-unsupported", False),
    (_RAY_WORKER, "segfault", None, False),  # and not killed: its list names both
    (_RAY_WORKER.split(" Worker IP")[0] + "\n", "killed", None, False),
    (_RAY_ACTOR, "segfault", None, False),
    (_DL_TERM, "killed", "python-error", True),  # a SIGTERM from outside (a preemption) can pass
]


@pytest.mark.parametrize("text,not_expected,expected,retry", NEAR_MISSES)
def test_a_near_miss_gets_no_specific_wrong_cause(text, not_expected, expected, retry):
    found = explain.explain(text)
    assert found is not None and found.signature != not_expected
    assert found.signature in explain.GENERIC, found.signature
    if expected is not None:
        assert found.signature == expected, found.signature
    assert found.retry == retry, found


@pytest.mark.parametrize("text,expected", [
    # DeepSpeed's own refusals (deepspeed/runtime/engine.py, pipe/engine.py) and transformers' of a ZeRO-3 ds_config
    ("AssertionError: Native DeepSpeed MoE is not supported with ZeRO Stage 3. Please use ZeRO Stage 1 or 2.\n",
     "ds-incompatible"),
    ("AssertionError: MoE not supported with Stage 3\n", "ds-incompatible"),
    ("AssertionError: 1bit-Adam is not compatible with ZeRO\n", "ds-incompatible"),
    ("ValueError: DeepSpeed Zero-3 is not compatible with passing a `device_map`.\n", "ds-incompatible"),
    # a crash named in the worker's own lines, then Ray's list of what may have happened
    ("(RayWorkerWrapper pid=150008) *** SIGSEGV received at time=1718000000 on cpu 12 ***\n" + _RAY_WORKER, "segfault"),
    # the shell's, spawn's and DataLoader's own words of a SIGKILL
    ("/opt/run.sh: line 12: 4721 Killed                  python train.py --deepspeed ds.json\n", "killed"),
    ("torch.multiprocessing.spawn.ProcessExitedException: process 1 terminated with signal SIGKILL\n", "killed"),
    ("RuntimeError: DataLoader worker (pid 4721) is killed by signal: Killed. \n", "memcg-oom"),
])
def test_the_components_own_words_still_name_the_cause(text, expected):
    assert sig(text) == expected


# NCCL's check in ncclCommInitRank (src/init.cc): two ranks of ONE communicator on the same host and bus id. A script
# choosing one device for every rank, or TRL's vLLM server joining the trainer's weight-sync group on its GPU.
_DUP = "NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 40\n"


@pytest.mark.parametrize("text", [
    "node0:4721:4790 [0] init.cc:871 " + _DUP + "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:1691, invalid usage, NCCL version 2.18.1\n",
    _DUP + "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)\n\n"
    'self.pynccl_comm = PyNcclCommunicator(pg, device="cuda:0")\n',
])
def test_duplicate_gpu_names_both_ways_it_happens(text):
    found = explain.explain(text)
    assert found.signature == "duplicate-gpu" and not found.retry
    assert "LOCAL_RANK" in found.cause and "vLLM server" in found.cause
    assert "does not use" in found.fix
    assert found.cause in FAILURES_ZH and found.fix in FAILURES_ZH
