"""Round 121's rule (issue 45), from threads of ranks that do different amounts of work (a checkpoint saved on rank 0
only, an IterableDataset with other lengths per rank): the abort with which torch's NCCL watchdog ends a rank after a
collective timed out (ProcessGroupNCCL rethrows the timeout from its watchdog thread: std::terminate, SIGABRT) is
that timeout's end, not a native crash of its own (sigwords.ends_a_timeout, aborted's aside_if), so the log is read as
the collective timeout: the words of the abort after the timeout's in the same text, or the abort whose own what() is
the timeout. No new signature: a second wording of each shape in other words than the corpus cases it was written
from, and near misses, aborts the watchdog's timeout did not cause, that must stay what they were."""

import pytest
from explain_rounds import sig

from dscluster import explain


@pytest.mark.parametrize("text", [
    # torch's backtrace of the timeout alone (WorkNCCL::checkTimeout's "Exception raised from checkTimeout at", the
    # log having lost the message above it, sigwords.WATCHDOG_TIMEOUT_FRAME), then srun's word for the task's SIGABRT
    ("Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most recent call "
     "first):\n"
     "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f93de0cf897 in "
     "/opt/venv/lib/python3.10/site-packages/torch/lib/libc10.so)\n"
     "srun: error: gpu-n12: task 3: Aborted (core dumped)\n"),
    # torch before 2.2 threw a std::runtime_error from the watchdog (its "[Rank N] Watchdog caught ..." what()), the
    # terminate line broken where a post's formatting broke it
    ("terminate called after throwing an instance of '\n"
     "std::runtime_error'\n"
     "  what():  [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, "
     "Timeout(ms)=1800000) ran for 1803391 milliseconds before timing out.\n"),
    # torch 2.x under rank prefixes (the ALLGATHER of bghira/SimpleTuner#3099's post), torchrun's summary of the
    # SIGABRT after it
    ("[rank1]:[E ... ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation timeout:\n"
     "WorkNCCL(SeqNum=34036, OpType=ALLGATHER, NumelIn=8, NumelOut=64, Timeout(ms)=5400000)\n"
     "ran for 5400073 milliseconds before timing out.\n"
     "  traceback : Signal 6 (SIGABRT) received by PID 4242\n"),
])
def test_the_abort_that_ends_a_timeout_is_the_timeout(text):
    found = explain.explain(text)
    assert found.signature == "collective-timeout"
    assert not found.retry  # a rank on another code path meets it again


@pytest.mark.parametrize("text,expected", [
    # ProcessGroupNCCL's watchdog ends a rank the same way for a CUDA error it found on a collective's stream: its
    # what() names that error, no timeout (here the terminate line whole, and broken as in a post)
    ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
     "  what():  [PG 0 (default_pg) Rank 0] Process group watchdog thread terminated with exception: CUDA error: an "
     "illegal memory access was encountered\n"
     "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
     "incorrect.\n", "aborted"),
    ("terminate called after throwing an instance of '\n"
     "c10::DistBackendError'\n"
     "  what():  [PG 0 (default_pg) Rank 0] Process group watchdog thread terminated with exception: CUDA error: an "
     "illegal memory access was encountered\n", "aborted"),
    # the heartbeat monitor's abort of a watchdog that is itself stuck (yflyzhang/simpleR1#1, NVIDIA/Fuser#3055): a
    # hang in a CUDA/NCCL call, no collective past its timeout
    ("[rank0]:[E608 14:09:10.210136079 ProcessGroupNCCL.cpp:1484] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
     "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
     "collectives.\n"
     "[rank0]:[F608 14:09:17.686401350 ProcessGroupNCCL.cpp:1309] [PG ID 0 PG GUID 0(default_pg) Rank 0] Terminating "
     "the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang.\n"
     "Aborted (core dumped)\n", "aborted"),
    # torch's race at exit, after training ended (exit-abort's own cause since session 30; aborted's before)
    ("Training complete.\nterminate called without an active exception\nAborted (core dumped)\n", "exit-abort"),
    # a rank that aborted first (a device-side assert) and the others' watchdog timeout after it: the abort is the root
    ("[rank1]: terminate called after throwing an instance of '\n"
     "[rank1]: c10::Error'\n"
     "[rank1]:   what():  CUDA error: device-side assert triggered\n"
     "[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, "
     "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600002 milliseconds before timing out.\n",
     "device-assert"),
])
def test_near_misses_stay_what_they_were(text, expected):
    assert sig(text) == expected
