"""The attempt's explanation when a rank exits with its own code: pdsh's "ssh exited with exit code 255"
for the nodes the teardown killed is an effect, never blamed as the cause."""

from __future__ import annotations

from dscluster.runs.supervising.verdict import Failure, explain_failure, first_rank_exit_code

LOG = """attempt 1: python -m deepspeed.launcher.runner ...
node1: [2026-11-30 00:10:01,000] [INFO] [launch.py:319:sigkill_handler] Killing subprocess 186
node1: [2026-11-30 00:10:01,001] [ERROR] [launch.py:325:sigkill_handler] ['python', 'train.py'] exits with return code = 17
pdsh@vm: node1: ssh exited with exit code 17
pdsh@vm: node0: ssh exited with exit code 255
"""


def _explain(tmp_path, text, failure):
    log = tmp_path / "launcher.log"
    log.write_text(text)
    upto = {log: log.stat().st_size}
    code = first_rank_exit_code(log, upto, "attempt 1: ")
    return code, explain_failure(failure, log, upto, 0.0, code, "run-1")


def test_a_rank_exit_is_named_with_its_code_and_node_not_blamed_on_ssh(tmp_path):
    code, exp = _explain(tmp_path, LOG, Failure("rank-failed", "Killing subprocess 186", "node1"))
    assert code == 17
    shown = exp.to_dict()
    assert exp.signature == "rank-exit" and exp.retry
    assert "node1" in shown["cause"] and "17" in shown["cause"] and "dscluster logs run-1 --node node1" in shown["fix"]


def test_a_real_ssh_failure_is_still_named_as_one(tmp_path):
    text = "attempt 1: ...\npdsh@vm: node2: ssh exited with exit code 255\n"
    code, exp = _explain(tmp_path, text, Failure("rank-failed", "ssh exited with exit code 255", "node2"))
    assert code == 255 and exp.signature == "ssh-255"


def test_a_specific_signature_beats_the_exit_code(tmp_path):
    text = LOG.replace("Killing subprocess 186", "ModuleNotFoundError: No module named 'wandb'")
    _code, exp = _explain(tmp_path, text, Failure("rank-failed", "exits with return code = 17", "node1"))
    assert exp.signature != "rank-exit" and "wandb" in exp.evidence


def test_a_lost_node_with_no_restart_left_points_at_dscluster_restart(tmp_path):
    failure = Failure("node-lost", "node1: no heartbeat for 11s (network partition or frozen node)", "node1")
    log = tmp_path / "launcher.log"
    log.write_text("attempt 1: ...\n")
    last = explain_failure(failure, log, {log: log.stat().st_size}, 0.0, None, "run-7", restarts_left=False)
    more = explain_failure(failure, log, {log: log.stat().st_size}, 0.0, None, "run-7", restarts_left=True)
    assert "dscluster restart run-7" in last.to_dict()["fix"] and "restarts remain" in more.to_dict()["fix"]


def test_the_rank_code_logged_after_the_detected_line_is_still_found(tmp_path):
    from dscluster.runs.supervising.verdict import failed_rank_exit_code

    log = tmp_path / "launcher.log"
    detected = "attempt 1: ...\n[INFO] [launch.py:319:sigkill_handler] Killing subprocess 186\n"
    log.write_text(detected + "[ERROR] [launch.py:325:sigkill_handler] ['python'] exits with return code = 3\n")
    snapshot = {log: len(detected)}  # what the supervisor had read when it saw "Killing subprocess"
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ") == 3
    log.write_text(detected + "exits with return code = -15\n")  # the teardown's own signal: not the cause
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ") is None


# ---- no futile restarts (issue 30) ----------------------------------------------------------------------
def test_the_same_failure_without_progress_is_futile_and_progress_or_another_failure_is_not():
    from dscluster.runs.supervising.verdict import futile_restart

    a = {"signature": "python-error", "evidence": "x",
         "error": {"type": "RuntimeError", "where": "/w/train.py:9", "message": "bad value 17 at 0x7f3a"}}
    b = {**a, "error": {**a["error"], "message": "bad value 23 at 0x7f9c"}}  # same shape: numbers differ
    assert futile_restart(a, b, progressed=False)
    assert not futile_restart(a, b, progressed=True)  # a newer checkpoint or step in between: worth another go
    assert not futile_restart(None, b, progressed=False)  # the first failure always gets its restart
    other = {**a, "error": {**a["error"], "where": "/w/train.py:10"}}
    assert not futile_restart(a, other, progressed=False)
    plain = {"signature": "rank-exit", "evidence": "exit 1 on node2"}
    assert futile_restart(plain, dict(plain), progressed=False)


def test_a_kill_seen_beside_network_noise_is_still_explained_as_the_kill(tmp_path):
    # A SIGKILLed rank has no words; the survivors' lines about the vanished peer must not take its place.
    text = ("attempt 1: ...\nnode2: [2026-11-30 00:10:01,001] [ERROR] [launch.py:325:sigkill_handler] ['python', "
            "'train.py', '--local_rank=0'] exits with return code = -9\n"
            "node1: [W socket.cpp:697] [c10d] The client socket has failed to connect to [node2]:29500 "
            "(errno: 111 - Connection refused).\n")
    code, exp = _explain(tmp_path, text, Failure("rank-failed", "Killing subprocess 9", "node2"))
    assert code == -9 and exp.signature == "rank-signal" and exp.retry


def test_a_rank_dying_of_its_error_with_an_abort_at_exit_is_the_same_failure_as_without(tmp_path):
    # Seen in CI: a rank raised its own RuntimeError; in one attempt of two, gloo's thread then raced Python's
    # shutdown ("terminate called without an active exception", exit -6). The cause is the error both times,
    # so the second attempt is the same failure, not a new one worth a third attempt.
    from dscluster.runs.supervising.verdict import futile_restart

    tb = ("rank 1 of 3 on node1\nstep 0 loss 1.9665\n[rank1]: Traceback (most recent call last):\n"
          '[rank1]:   File "/shared/train.py", line 64, in <module>\n[rank1]:     bad_batch()\n'
          '[rank1]:   File "/shared/train.py", line 40, in bad_batch\n'
          '[rank1]:     raise RuntimeError("the data loader returned an empty batch")\n'
          "[rank1]: RuntimeError: the data loader returned an empty batch\n")
    launcher = tmp_path / "launcher.log"
    launcher.write_text("attempt 1: ...\nnode1: [INFO] [launch.py:253:sigkill_handler] Killing subprocess 300\n")
    keys = []
    for n, (tail, code) in enumerate([("", 1), ("terminate called without an active exception\n", -6),
                                      ("Fatal Python error: Segmentation fault\n", -11)]):
        rank_log = tmp_path / f"2026120407393{n}_rank1.log"
        rank_log.write_text(tb + tail)
        exp = explain_failure(Failure("rank-failed", "Killing subprocess 300", "node1"), launcher,
                              {launcher: launcher.stat().st_size, rank_log: rank_log.stat().st_size}, 0.0,
                              code, "run-1", nodes={1: "node1"})
        assert exp.signature == "python-error" and exp.error["message"] == "the data loader returned an empty batch"
        keys.append(exp.to_dict())
        rank_log.unlink()
    assert futile_restart(keys[0], keys[1], progressed=False) and futile_restart(keys[1], keys[2], progressed=False)
    # A kill from outside (SIGKILL: the OOM killer, an operator) stays the cause even beside a rank's error.
    rank_log = tmp_path / "20261204073939_rank1.log"
    rank_log.write_text(tb)
    exp = explain_failure(Failure("rank-failed", "Killing subprocess 300", "node1"), launcher,
                          {launcher: launcher.stat().st_size, rank_log: rank_log.stat().st_size}, 0.0, -9, "run-1",
                          nodes={1: "node1"})
    assert exp.signature == "rank-signal"


def test_a_survivors_abort_at_exit_does_not_explain_the_rank_that_was_sigkilled(tmp_path):
    # Seen in CI: rank 2 SIGKILLed; rank 0 raised "Connection closed by peer" and aborted on its way out
    # (gloo's thread racing Python's shutdown). The kill is the cause, named with its signal.
    from dscluster import explain

    launcher = tmp_path / "launcher.log"
    launcher.write_text("attempt 1: ...\nnode2: [2026-12-04 07:50:59,662] [INFO] [launch.py:253:sigkill_handler] "
                        "Killing subprocess 23\nnode2: [2026-12-04 07:50:59,665] [ERROR] [launch.py:259:sigkill_handler] "
                        "['python', '-u', 'hang.py'] exits with return code = -9\n")
    snapshot = launcher.stat().st_size
    with open(launcher, "a") as f:
        f.write("node0: [2026-12-04 07:51:00,101] [ERROR] [launch.py:259:sigkill_handler] ['python'] exits with "
                "return code = -6\n")
    rank0 = tmp_path / "20261204075054_rank0.log"
    rank0.write_text('step 2 loss 1.0\n[rank0]: Traceback (most recent call last):\n[rank0]:   File "/s/hang.py", '
                     "line 5, in <module>\n[rank0]:     work.wait()\n[rank0]: RuntimeError: [/__w/pytorch/pytorch/"
                     "third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [10.225.69.12]:23693.\n"
                     "terminate called without an active exception\n")
    upto = {launcher: snapshot, rank0: rank0.stat().st_size}
    code = first_rank_exit_code(launcher, upto, "attempt 1: ")
    exp = explain_failure(Failure("rank-failed", "Killing subprocess 23", "node2"), launcher, upto, 0.0, code, "run-1",
                          nodes={0: "node0"})
    assert code == -9 and exp.signature == "rank-signal" and exp.params["sig"] == "SIGKILL", exp
    # `dscluster explain` over the whole logs says the same.
    whole = explain.explain_files([launcher, rank0], nodes={0: "node0"})
    assert whole.signature != "aborted" and whole.error["type"] == "SIGKILL", whole


def test_the_failed_nodes_own_code_is_taken_over_a_survivors_that_was_logged_first(tmp_path):
    # Seen in CI: rank 2 (node2) SIGKILLed; node1's launch.py logged its rank's exit 1 (the closed connection)
    # before node2's logged -9. The failure is node2's (the heartbeats saw its rank go first): its code counts.
    from dscluster.runs.supervising.verdict import failed_rank_exit_code

    log = tmp_path / "launcher.log"
    seen = ("attempt 1: ...\nnode1: [2026-12-05 18:58:05,001] [ERROR] [launch.py:259:sigkill_handler] ['python'] "
            "exits with return code = 1\n")
    log.write_text(seen + "node2: [2026-12-05 18:58:05,300] [ERROR] [launch.py:259:sigkill_handler] ['python'] "
                   "exits with return code = -9\npdsh@vm: node1: ssh exited with exit code 1\n")
    snapshot = {log: len(seen)}
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ", node="node2") == -9
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ", node="node1") == 1
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ") == 1  # no node: the first code seen
    # Past the snapshot, pdsh's 255 for a node is the teardown's, never the node's rank's code.
    log.write_text(seen + "pdsh@vm: node2: ssh exited with exit code 255\n")
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ", node="node2") == 1
