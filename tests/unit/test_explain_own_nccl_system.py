"""NCCL's failed system call raised as the rank's own error, with no NCCL WARN line to say which (errorline.last_resort).

Before: `a rank raised RuntimeError ... fix what the error names`, which says nothing an NCCL user can act on. Now
nccl-system-call's cause and fix (rerun with NCCL_DEBUG=WARN; shared memory in a container; NCCL_SOCKET_IFNAME, or
--network=host for containers on Docker's bridge network). Still a generic answer (a symptom: it does not know which).
"""

from __future__ import annotations

from dscluster import explain

# torch 1.x's wording (ProcessGroupNCCL.cpp's C10D_NCCL_CHECK), then NCCL's own ncclGetErrorString text.
OLD = """Traceback (most recent call last):
  File "train.py", line 41, in <module>
    model = DDP(model, device_ids=[local_rank])
  File "/opt/conda/lib/python3.8/site-packages/torch/nn/parallel/distributed.py", line 578, in __init__
    dist._verify_model_across_ranks(self.process_group, parameters)
RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:957, unhandled system error, NCCL version 2.10.3
ncclSystemError: System call (socket, malloc, munmap, etc) failed.
"""
# torch 2.x's wording: DistBackendError, and the hint torch adds to it.
NEW = """Traceback (most recent call last):
  File "/workspace/train.py", line 88, in <module>
    dist.barrier()
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/c10d_logger.py", line 47, in wrapper
    return func(*args, **kwargs)
torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3
ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.
Last error:
"""


def test_the_rank_s_own_nccl_system_error_gets_nccl_s_advice_in_both_wordings():
    for log in (OLD, NEW):
        exp = explain.explain(log)
        assert exp.signature == "nccl-system-call", exp
        assert exp.retry is False and "NCCL_DEBUG=WARN" in exp.fix and "--network=host" in exp.fix, exp
        assert "unhandled system error" in exp.evidence or "ncclSystemError" in exp.evidence, exp


def test_near_misses_keep_their_own_answers():
    # An OS error in the same block is the first OS error text: it speaks first (the disk, not NCCL).
    disk = OLD.replace("ncclSystemError: System call (socket, malloc, munmap, etc) failed.\n",
                       "OSError: [Errno 28] No space left on device: '/dev/shm/nccl-abc'\n")
    assert explain.explain(disk).signature != "nccl-system-call"
    # NCCL's other errors raised as a rank's own are not a failed system call.
    inner = OLD.replace("unhandled system error", "internal error").replace(
        "ncclSystemError: System call (socket, malloc, munmap, etc) failed.\n", "")
    assert explain.explain(inner).signature != "nccl-system-call"
    # A user's own message with the words "system error" is the user's error.
    own = OLD.replace("RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:957, unhandled system "
                      "error, NCCL version 2.10.3\nncclSystemError: System call (socket, malloc, munmap, etc) failed.\n",
                      "RuntimeError: unhandled system error while reading the dataset index\n")
    assert explain.explain(own).signature != "nccl-system-call"
