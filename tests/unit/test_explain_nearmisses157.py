"""Review 157: the corpus's misleading answers (a wrong specific cause), the words that misled, and what prints them.
- nccl-ib read NCCL's IB async thread's every event as a failure (`then("NET/IB", "async event")`). NCCL's
  ncclIbAsyncThreadMain (NVIDIA/nccl src/transport/net_ib.cc before 2.23, net_ib/common.cc since) prints an event of a
  working fabric too: a port coming up, an SM, LID, P_Key or GID table change, client reregistration (rdma-core's
  ibv_event_type_str names), `Got async event : <name>` before 2.23, `Got non-fatal async event: <name>(<n>)` since
  2.29. vllm-project/vllm#5342 posted two `Got async event : GID table change` lines beside an unrelated worker error
  (speculative decoding past the draft model's context): nccl-ib before, now not. The failure events stay read (the
  corpus's nccl-1524 `local access violation work queue error`, NVIDIA/nccl#1710's; a `port error`), and since 2.23
  NCCL's `async fatal event` wording for them is read too (a second wording from its source).
- The other misleading answers are the right words read by the family that prints them; the log does not show what
  would tell the thread's narrower cause (NOT_WRITTEN in test_failure_corpus.py). Their texts named one cause where the
  thread's is another common one, and now name it too: nccl-ib ports of different MTUs (nccl-1524), meta-tensor a 4-bit
  QLoRA model under ZeRO-3 (Qwen-VL-Series-Finetune#7), cuda-fork a notebook launcher's fork after an import initialized
  CUDA (accelerate#3524), collective-cpu-tensor a single-GPU library's call (unsloth#2584), nfs-stale-handle a compile
  cache on the shared mount (opendatahub-io/distributed-workloads#844), device-mismatch a reference model FSDP did not
  wrap (LlamaFactory#9560). address-in-use, master-unreachable, no-gpu and ds-config-invalid already named theirs.
No corpus case or explain log changed its answer."""

import json

from explain_rounds import FAILURES_ZH, SRC, sig

from dscluster import explain

EXPLAIN_ZH = json.loads((SRC / "locale" / "zh_TW" / "explain.json").read_text(encoding="utf-8"))

# vllm-project/vllm#5342's issue body as posted (one line): NCCL < 2.23's WARN for a GID table change, twice, then the
# worker's error. Not an IB failure.
_VLLM_GID_CHANGE = (
    "Error: RayWorkerWrapper pid=142935) 07d92dd514d4:142935:143254 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : "
    "mlx5_3:1 Got async event : GID table change (RayWorkerWrapper pid=142935) (RayWorkerWrapper pid=142935) "
    "07d92dd514d4:142935:143254 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_3:1 Got async event : GID table "
    "change (RayWorkerWrapper pid=143111) ERROR 06-07 16:53:17 worker_base.py:148] Error executing method "
    "start_worker_execution_loop. This might cause deadlock in distributed execut...\n")

# NCCL 2.29+'s words for the events of a port that comes back (common.cc: "Got non-fatal async event: %s(%d)"), as a
# log parser's documentation quotes them.
_NON_FATAL_EVENTS = (
    "NCCL WARN NET/IB : mlx5_1:1 Got non-fatal async event: client reregistration(17)\n"
    "NCCL WARN NET/IB : mlx5_1:1 Got non-fatal async event: port active(9)\n")


def test_events_of_a_working_fabric_are_no_ib_failure():
    assert sig(_VLLM_GID_CHANGE) != "nccl-ib"
    assert sig(_NON_FATAL_EVENTS) != "nccl-ib"
    for name in ("port active", "LID change", "P_Key change", "SM change", "client reregistration", "GID table change",
                 "path migrated", "send queue drained", "last WQE reached", "SRQ limit reached"):
        assert sig(f"node1:1:2 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : {name}\n") \
            != "nccl-ib", name


def test_failure_events_stay_ib_failures():
    # NVIDIA/nccl#1710 (NCCL < 2.23's words), a port going down in 2.29's, and 2.23+'s fatal wording (its source's
    # format: "NET/IB : %s:%d async fatal event on QP (%p) ...: %s").
    assert sig("node201:127799:127863 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : "
               "local access violation work queue error\n") == "nccl-ib"
    assert sig("NCCL WARN NET/IB : mlx5_3:1 Got non-fatal async event: port error(10)\n") == "nccl-ib"
    assert sig("gpu7:4711:4790 [0] NCCL WARN NET/IB : mlx5_2:1 async fatal event on QP (0x55d0c8a1b2c0) qpn=4821 "
               "handle=12 send_cq=3 recv_cq=3 state=6 sq_psn=0 rq_psn=0: local access violation work queue error\n") \
        == "nccl-ib"
    assert sig("gpu7:4711:4790 [0] NCCL WARN NET/IB : mlx5_2:1 async fatal event: local catastrophic error\n") \
        == "nccl-ib"


def _texts(name):
    s = [s for s in explain.SIGNATURES if s.name == name][-1]
    return s.cause + " " + s.fix, (s.cause, s.fix)


def test_broad_texts_name_the_cause_that_misled():
    for name, words in (("nccl-ib", ("MTU",)), ("meta-tensor", ("QLoRA", "ZeRO-2")),
                        ("cuda-fork", ("notebook", "import")), ("collective-cpu-tensor", ("library",)),
                        ("nfs-stale-handle", ("TRITON_CACHE_DIR", "node-local")),
                        ("device-mismatch", ("reference model",))):
        text, pair = _texts(name)
        for w in words:
            assert w in text, (name, w)
        for t in pair:
            assert t in FAILURES_ZH or t in EXPLAIN_ZH, (name, t)
