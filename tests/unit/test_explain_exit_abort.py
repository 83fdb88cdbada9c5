"""A rank's abort at exit with no exception in flight ("terminate called without an active exception") is read as
exit-abort: PyTorch's process-group threads outliving a script that returned without destroy_process_group(). The
training had ended, so the supervisor does not restart it (it used to run a finished script again). A survivor's
abort after its peer died, a C++ exception's abort and the watchdog's abort after a timeout are not it."""

from __future__ import annotations

from dscluster import explain
from dscluster.runs.supervising.verdict import Failure, explain_failure, first_rank_exit_code

# torchrun (torch 2.13, CPU), two ranks of a gloo script that all_reduces 20 times, prints "done" and returns without
# destroy_process_group(): 4 of 5 runs ended so (0 of 6 with destroy_process_group()). Times and pids as printed.
TORCHRUN = """done 0
done 1
terminate called without an active exception
W1206 23:46:02.372000 32101 torch/distributed/elastic/multiprocessing/api.py:1028] Sending process 32107 closing signal SIGTERM
E1206 23:46:02.404000 32101 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -6) local_rank: 0 (pid: 32106) of binary: /work/.venv/bin/python
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
=======================================================
t.py FAILED
-------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-06_23:46:02
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : -15 (pid: 32107)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 32107
-------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-06_23:46:02
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -6 (pid: 32106)  (SIGABRT)
  error_file: <N/A>
  traceback : Signal 6 (SIGABRT) received by PID 32106
=======================================================
"""

# DeepSpeed's launcher over pdsh, as dscluster's launcher log holds it: the rank printed its last step and "done".
DEEPSPEED = (
    "attempt 1: ...\n"
    "node1: [2026-11-29 21:26:45,654] [INFO] [launch.py:253:sigkill_handler] Killing subprocess 26\n"
    "node1: [2026-11-29 21:26:45,654] [ERROR] [launch.py:259:sigkill_handler] ['/opt/venv/bin/python', '-u', "
    "'/shared/train.py', '--local_rank=0'] exits with return code = -6\n"
    "[node1 1] step 2 loss 4.6161\n[node1 1] done\n[node1 1] terminate called without an active exception\n"
    "pdsh@master: node1: ssh exited with exit code 255\n")


def test_the_abort_of_a_finished_script_is_exit_abort_with_no_restart():
    for text in (TORCHRUN, DEEPSPEED, "Training complete.\nterminate called without an active exception\n"
                 "Aborted (core dumped)\n"):
        exp = explain.explain(text)
        assert exp.signature == "exit-abort" and not exp.retry, (text, exp)
        assert exp.evidence.endswith("terminate called without an active exception")
        assert "destroy_process_group()" in exp.fix and "run the script again" in exp.cause


def test_the_supervisor_does_not_restart_a_finished_script(tmp_path):
    log = tmp_path / "launcher.log"
    log.write_text(DEEPSPEED)
    upto = {log: log.stat().st_size}
    code = first_rank_exit_code(log, upto, "attempt 1: ")
    exp = explain_failure(Failure("rank-failed", "Killing subprocess 26", "node1"), log, upto, 0.0, code, "run-1")
    assert code == -6 and exp.signature == "exit-abort" and not exp.retry, exp


NEAR_MISSES = [
    # A C++ exception that reached std::terminate (its what() names the failing call): aborted, whose restart stands.
    ("step 3 loss 2.1\nterminate called after throwing an instance of 'std::system_error'\n"
     "  what():  Resource temporarily unavailable\nAborted (core dumped)\n", "aborted"),
    # Both words in one rank's text: the exception's abort is the cause, not a thread left running at exit.
    ("terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA driver error: unknown error\n"
     "terminate called without an active exception\n", "aborted"),
    # torch's NCCL watchdog ending a timed-out rank, then the abort (round 121): the timeout's.
    ("[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, "
     "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800133 milliseconds before timing out.\n"
     "terminate called without an active exception\n", "collective-timeout"),
    # The same with the timeout in rank 0's prefixed lines and the abort unprefixed (two streams): no exit-abort, as
    # before it existed (aborted, restart offered).
    ("[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, "
     "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800133 milliseconds before timing out.\n"
     "terminate called without an active exception\n", "aborted"),
    # The rank's own Python error, then the abort on its way out: the error is the cause (PyTorch's race at exit).
    ("[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/shared/train.py\", line 64, in <module>\n"
     "[rank1]:     bad_batch()\n[rank1]: RuntimeError: the data loader returned an empty batch\n"
     "terminate called without an active exception\n", "python-error"),
]


def test_near_misses_are_not_exit_abort():
    for text, expected in NEAR_MISSES:
        exp = explain.explain(text)
        assert exp is not None and exp.signature == expected, (text, exp)


def test_a_survivors_abort_does_not_explain_a_lost_node(tmp_path):
    # node2 vanished (the heartbeats saw it go); node1's rank aborted as it died of the lost peer. The lost node is
    # the failure, and it is restarted once back, as before exit-abort existed.
    log = tmp_path / "launcher.log"
    log.write_text("attempt 1: ...\n[node1 0] step 5 loss 1.2\n[node1 0] terminate called without an active exception\n")
    exp = explain_failure(Failure("node-lost", "node2 stopped answering", "node2"), log, {log: log.stat().st_size},
                          0.0, None, "run-1")
    assert exp.signature == "node-lost" and exp.retry, exp
    stalled = explain_failure(Failure("stalled", "no progress for 300 s"), log, {log: log.stat().st_size}, 0.0, None,
                              "run-1")
    assert stalled.signature == "stalled", stalled
    # A node whose watchdog did not start: its own explanation, not the survivor's abort.
    start = explain.custom("node-unreachable", "A node did not answer over SSH.", "Run `dscluster doctor`.")
    unreachable = explain_failure(Failure("unreachable", "node2: the watchdog did not start", "node2", start), log,
                                  {log: log.stat().st_size}, 0.0, None, "run-1")
    assert unreachable is start, unreachable


def test_a_survivors_abort_does_not_explain_a_sigkilled_rank(tmp_path):
    # node2's rank SIGKILLed first (the OOM killer, an operator); node1's rank aborted at exit after it. The kill is
    # the failure, named with its signal (explain.AT_EXIT: an abort explains only a rank that aborted).
    log = tmp_path / "launcher.log"
    log.write_text("attempt 1: ...\nnode2: [2026-12-04 07:50:59,665] [ERROR] [launch.py:259:sigkill_handler] "
                   "['python', '-u', 'train.py'] exits with return code = -9\n"
                   "[node1 0] terminate called without an active exception\n")
    upto = {log: log.stat().st_size}
    code = first_rank_exit_code(log, upto, "attempt 1: ")
    exp = explain_failure(Failure("rank-failed", "Killing subprocess 23", "node2"), log, upto, 0.0, code, "run-1")
    assert code == -9 and exp.signature == "rank-signal" and exp.retry, exp
