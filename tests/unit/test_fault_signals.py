"""The signals a lost node is found by (issue #46), each on its own: two that agree, or one that is certain
(runs/supervising/detect.py); the probe of a node's sshd (runs/supervising/probe.py); the stopped ranks a watchdog reports; a late
watchdog's reach (runs/supervising/reaper.py); a rank error's time in events.jsonl."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

from dscluster.runs.supervising import detect
from dscluster.runs.supervising.channel import STOPPED_FOR, NodeChannel
from dscluster.runs.supervising.detect import NodeView
from dscluster.runs.supervising.judging import error_fields
from dscluster.runs.supervising.probe import Probe, sshd_answers
from dscluster.runs.supervising.reaper import run_pids
from dscluster.runs.supervising.watchdog import stopped_ranks

LIMITS = {"connect_timeout": 30.0, "heartbeat_timeout": 10.0}


def test_a_pause_with_an_unanswered_probe_is_a_lost_node_and_a_pause_alone_is_not():
    paused = NodeView("node2", True, False, False, 1.6, unanswered=True)
    failure = detect.node_failure([NodeView("node1", True, False, False, 0.2), paused], **LIMITS)
    assert (failure.kind, failure.node) == ("node-lost", "node2") and "sshd does not answer" in failure.detail
    # A busy machine: heartbeats late by seconds, the node's sshd answers: no loss before heartbeat_timeout.
    assert detect.node_failure([NodeView("node2", True, False, False, 9.0)], **LIMITS) is None
    # A probe's answer about an earlier pause never counts once the heartbeats are back under a second.
    assert detect.node_failure([NodeView("node2", True, False, False, 0.5, unanswered=True)], **LIMITS) is None


def test_a_stopped_rank_is_certain_alone():
    failure = detect.node_failure([NodeView("node3", True, False, False, 0.1, frozen=(5,))], **LIMITS)
    assert (failure.kind, failure.node) == ("node-lost", "node3") and "rank 5 stopped" in failure.detail


def _server(banner: bytes | None):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    held = []

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            held.append(conn)
            if banner:
                conn.sendall(banner)

    threading.Thread(target=serve, daemon=True).start()
    return srv, srv.getsockname()[1]


def test_the_probe_wants_sshd_s_banner_not_only_a_connection():
    srv, port = _server(b"SSH-2.0-OpenSSH_9.2\r\n")
    mute, mute_port = _server(None)  # a frozen node: its kernel accepts, its sshd never writes
    try:
        assert sshd_answers("127.0.0.1", port, timeout=2.0)
        t0 = time.monotonic()
        assert not sshd_answers("127.0.0.1", mute_port, timeout=0.5)
        assert time.monotonic() - t0 < 2.0
        probe = Probe(("127.0.0.1", mute_port))
        probe.start(41.0)
        deadline = time.monotonic() + 10
        while not probe.failed_since(41.0) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert probe.failed_since(41.0) and not probe.failed_since(42.0)  # only for the pause it was asked about
    finally:
        srv.close()
        mute.close()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    free_port = closed.getsockname()[1]
    closed.close()
    assert not sshd_answers("127.0.0.1", free_port, timeout=1.0)
    assert not Probe(None).failed_since(1.0)  # a local run: nothing to probe, never a failure


def _child(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={**os.environ, **env})


def test_the_watchdog_sees_a_stopped_rank_and_a_late_one_leaves_the_next_attempt_alone():
    run = f"t46-{os.getpid()}"
    old = _child({"DSCLUSTER_RUN_ID": run, "DSCLUSTER_ATTEMPT": "1", "RANK": "5"})
    new = _child({"DSCLUSTER_RUN_ID": run, "DSCLUSTER_ATTEMPT": "2", "RANK": "5"})
    try:
        deadline = time.monotonic() + 20
        while len(run_pids(run)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(run_pids(run)) == sorted([old.pid, new.pid])
        assert run_pids(run, upto=1) == [old.pid] and sorted(run_pids(run, upto=2)) == sorted([old.pid, new.pid])
        assert stopped_ranks([old.pid]) == []
        os.kill(old.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while not stopped_ranks([old.pid]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert stopped_ranks([old.pid, new.pid]) == [5]
    finally:
        for p in (old, new):
            p.kill()
            p.wait()


def test_a_rank_counts_as_frozen_only_once_it_stays_stopped():
    ch = NodeChannel.__new__(NodeChannel)
    ch.stopped, ch._stopped_since, ch._kill_sent = (), None, False
    ch._note_stopped("hb 3 ranks=0,1 stopped=1", 100.0)
    ch.last_hb = 100.0
    assert ch.frozen_ranks() == ()  # one heartbeat: a debugger's blink
    ch._note_stopped("hb 3 ranks=0,1 stopped=1", 100.0 + STOPPED_FOR)
    ch.last_hb = 100.0 + STOPPED_FOR
    assert ch.frozen_ranks() == (1,)
    ch._kill_sent = True  # the teardown's own stops are not a fault
    assert ch.frozen_ranks() == ()


def test_a_rank_error_s_time_is_iso_text_in_events():
    fields = error_fields({"type": "OSError", "rank": 0, "time": 1764900000.5})
    assert "time" not in fields and fields["type"] == "OSError" and fields["logged"].startswith("2025-12-0")
    assert "logged" not in error_fields({"type": "OSError"})


def test_a_full_disk_s_first_error_names_the_enospc_before_torch_s_words():
    from dscluster import explain as explainer
    from dscluster.runs.supervising.judging import enospc_first

    full = explainer.custom("disk-full", "The disk {path} is full.", "Free space.", "", path="/shared/runs/r")
    torch_words = {"rank": 0, "summary": "RuntimeError: [enforce fail at inline_container.cc:626] . unexpected pos"}
    line = enospc_first(torch_words, full)["summary"]
    assert line.startswith("No space left on device (ENOSPC) in /shared/runs/r") and "inline_container.cc" in line
    plain = {"rank": 0, "summary": "OSError: [Errno 28] No space left on device: '/shared/x'"}
    assert enospc_first(plain, full) == plain


def test_sim_acts_on_a_recorded_pid_only_while_it_is_the_same_process():
    from dscluster.sim.procs import recorded, remember

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        entry: dict = {}
        remember(entry, "pid1", proc.pid)
        assert recorded(entry, "pid1") == proc.pid
        reused = {**entry, "pid1_start": entry["pid1_start"] - 1}  # the PID now names a process started later
        assert recorded(reused, "pid1") is None and recorded({"pid1": proc.pid}, "pid1") is None  # no start time
        assert recorded({"pid1": proc.pid}, "pid1", strict=False) == proc.pid  # a state from before: liveness only
    finally:
        proc.kill()
        proc.wait()
    assert recorded(entry, "pid1") is None


def test_a_stopped_rank_takes_the_teardown_s_sigterm_at_once_not_the_sigkill_after_the_grace():
    from dscluster.runs.supervising.reaper import reap

    run_id = f"stopped-{os.getpid()}"
    rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                            env={**os.environ, "DSCLUSTER_RUN_ID": run_id, "RANK": "0"})
    try:
        execed = threading.Event()  # the child is python (its environment has the run's marker) before it stops
        while not execed.wait(0.02):
            execed.set() if run_pids(run_id) else None
        os.kill(rank.pid, signal.SIGSTOP)
        assert reap(run_id, grace=20.0) == 1
        assert rank.wait(timeout=60) == -signal.SIGTERM  # continued, so its SIGTERM was delivered: no SIGKILL
    finally:
        rank.kill()
        rank.wait()
