"""The attempt's explanation when a rank exits with its own code: pdsh's "ssh exited with exit code 255"
for the nodes the teardown killed is an effect, never blamed as the cause."""

from __future__ import annotations

from dscluster.runs.verdict import Failure, explain_failure, first_rank_exit_code

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
    from dscluster.runs.verdict import failed_rank_exit_code

    log = tmp_path / "launcher.log"
    detected = "attempt 1: ...\n[INFO] [launch.py:319:sigkill_handler] Killing subprocess 186\n"
    log.write_text(detected + "[ERROR] [launch.py:325:sigkill_handler] ['python'] exits with return code = 3\n")
    snapshot = {log: len(detected)}  # what the supervisor had read when it saw "Killing subprocess"
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ") == 3
    log.write_text(detected + "exits with return code = -15\n")  # the teardown's own signal: not the cause
    assert failed_rank_exit_code(log, snapshot, "attempt 1: ") is None


# ---- no futile restarts (issue 30) ----------------------------------------------------------------------
def test_the_same_failure_without_progress_is_futile_and_progress_or_another_failure_is_not():
    from dscluster.runs.verdict import futile_restart

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
