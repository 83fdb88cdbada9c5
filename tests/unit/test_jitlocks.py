"""runs/supervising/jitlocks.py: a torch JIT build lock whose holder died is removed; nothing else is. Real processes
take the lock as torch's FileBaton does (os.open O_CREAT | O_EXCL, the descriptor kept open while it builds)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from dscluster.runs.supervising import jitlocks

BUILDER = """
import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL)  # torch/utils/file_baton.py FileBaton.try_acquire
print("held", flush=True)
time.sleep(600)
"""


def _builder(lock, env: dict[str, str]) -> subprocess.Popen:
    lock.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", BUILDER, str(lock)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, **env})
    assert proc.stdout.readline().strip() == "held"
    return proc


def _gone(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)  # no finally runs: the lock stays, as a killed build leaves it
    proc.wait(timeout=30)


def test_a_lock_whose_builder_was_killed_is_removed_and_a_living_builders_is_kept(tmp_path):
    root = tmp_path / "ext"
    dead_lock, live_lock = root / "py311_cpu" / "fused_adam" / "lock", root / "py311_cpu" / "cpu_adam" / "lock"
    dead, live = _builder(dead_lock, {"TORCH_EXTENSIONS_DIR": str(root)}), _builder(live_lock,
                                                                                     {"TORCH_EXTENSIONS_DIR": str(root)})
    try:
        watch = jitlocks.LockWatch()
        assert watch.tick([dead.pid, live.pid], time.monotonic()) == []  # both holders alive: nothing removed
        assert {lk.path for lk in watch.holders} == {os.path.realpath(dead_lock), os.path.realpath(live_lock)}
        _gone(dead)
        assert watch.release_orphans() == [os.path.realpath(dead_lock)]
        assert not dead_lock.exists() and live_lock.exists()
        assert watch.release_orphans() == []  # once
    finally:
        for p in (dead, live):
            if p.poll() is None:
                _gone(p)


def test_a_lock_taken_again_by_another_process_after_the_holder_died_is_kept(tmp_path):
    root = tmp_path / "ext"
    lock = root / "py311_cpu" / "fused_adam" / "lock"
    first = _builder(lock, {"TORCH_EXTENSIONS_DIR": str(root)})
    watch = jitlocks.LockWatch()
    watch.scan([first.pid])
    _gone(first)
    lock.unlink()  # removed by hand, and a new build took it: another file
    second = _builder(lock, {"TORCH_EXTENSIONS_DIR": str(root)})
    try:
        assert watch.release_orphans() == [] and lock.exists()
    finally:
        _gone(second)


def test_only_locks_under_the_processs_own_extensions_cache_count(tmp_path):
    """A file named `lock` elsewhere (a user's own lock file, another tool's) is never touched; without
    TORCH_EXTENSIONS_DIR the cache is HOME's ~/.cache/torch_extensions (XDG_CACHE_HOME's when set)."""
    home = tmp_path / "home"
    own = home / ".cache" / "torch_extensions" / "py311_cpu" / "op" / "lock"
    other = tmp_path / "data" / "lock"
    env = {"HOME": str(home), "TORCH_EXTENSIONS_DIR": "", "XDG_CACHE_HOME": ""}
    holders = [_builder(own, env), _builder(other, env)]
    try:
        watch = jitlocks.LockWatch()
        watch.scan([p.pid for p in holders])
        assert [lk.path for lk in watch.holders] == [os.path.realpath(own)]
        for p in holders:
            _gone(p)
        assert watch.release_orphans() == [os.path.realpath(own)] and other.exists()
    finally:
        for p in holders:
            if p.poll() is None:
                _gone(p)
    assert jitlocks.extensions_root({"XDG_CACHE_HOME": "/x/cache", "HOME": "/h"}) == "/x/cache/torch_extensions"
    assert jitlocks.extensions_root({}) is None


def test_the_watchdog_removes_the_lock_of_a_rank_killed_while_it_built(tmp_path):
    """The watchdog of a run (its processes found by DSCLUSTER_RUN_ID): a rank holding the lock is SIGKILLed
    (an OOM kill, a launcher's fail-fast); the watchdog removes the lock within its scan period and says so."""
    root = tmp_path / "ext"
    lock = root / "py311_cpu" / "fused_adam" / "lock"
    run_id = f"jitlock-{os.getpid()}"
    rank = _builder(lock, {"TORCH_EXTENSIONS_DIR": str(root), "DSCLUSTER_RUN_ID": run_id, "RANK": "0"})
    err = tmp_path / "watchdog.err"
    with open(err, "w") as errf:
        dog = subprocess.Popen([sys.executable, "-m", "dscluster.runs.supervising.watchdog", run_id,
                                "--ping-timeout=600"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errf,
                               text=True)
    try:
        for line in dog.stdout:  # its first heartbeat counting the rank: the scan before it saw the holder alive
            if line.startswith("hb 1 "):
                break
        _gone(rank)
        deadline = time.monotonic() + 60
        while lock.exists() and time.monotonic() < deadline:
            dog.stdin.write("ping\n")
            dog.stdin.flush()
            dog.stdout.readline()
        assert not lock.exists()
    finally:
        if rank.poll() is None:
            _gone(rank)
        dog.stdin.write("exit\n")
        dog.stdin.flush()
        dog.wait(timeout=30)
    assert f"removed {os.path.realpath(lock)}: torch's JIT build lock" in err.read_text()


def test_a_build_in_progress_is_progress_against_the_stall_timeout(tmp_path, monkeypatch):
    """A first run compiles an op for minutes, printing nothing, while the other ranks wait in FileBaton.wait: the
    node's watchdog says `build=1` while a process of the run holds the lock, and the supervisor's watch counts
    it as progress (a stall timeout of 2 s would otherwise fire) up to BUILD_MAX_S (a compiler stuck longer is a
    stall); once the holder is gone, idle time grows again."""
    from dscluster.cluster.runner import LocalRunner
    from dscluster.runs.supervising.channel import NodeChannel
    from dscluster.runs.supervising.watching import AttemptWatch

    root = tmp_path / "ext"
    lock = root / "py311_cpu" / "deepspeed_shm_comm" / "lock"
    run_id = f"jitbuild-{os.getpid()}"
    rank = _builder(lock, {"TORCH_EXTENSIONS_DIR": str(root), "DSCLUSTER_RUN_ID": run_id, "RANK": "0"})
    run_dir = tmp_path / "run"
    (run_dir / "logs").mkdir(parents=True)
    log = run_dir / "logs" / "launcher.log"
    log.write_text("")
    chan = NodeChannel("localhost", LocalRunner(), sys.executable, run_id, ping_timeout=600)
    watch = AttemptWatch([chan], run_dir=run_dir, log_path=log, stall_timeout=2.0)
    try:
        assert chan.wait_ready(60)
        runner = type("Runner", (), {"poll": lambda self: None, "pid": 0, "stdout": None})()
        watch.runner_started(runner, 0, world=1)
        deadline = time.monotonic() + 60
        while not chan.building and time.monotonic() < deadline:
            time.sleep(0.1)
        assert chan.building, "no heartbeat said build=1 while the rank held the lock"
        started = time.monotonic()
        while time.monotonic() - started < 4.0:  # twice the stall timeout, silent logs: still no idle time
            assert watch.observe().idle < 1.0
            time.sleep(0.2)
        from dscluster.runs.supervising import watching

        monkeypatch.setattr(watching, "BUILD_MAX_S", 3.0)  # a build going on longer than that is stuck
        deadline = time.monotonic() + 60
        while watch.observe().idle < 1.5 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert chan.building and watch.observe().idle >= 1.5
        _gone(rank)
        deadline = time.monotonic() + 60
        while chan.building and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not chan.building
        deadline = time.monotonic() + 60
        while watch.observe().idle < 2.5 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert watch.observe().idle >= 2.5  # nothing builds now: silence counts again
    finally:
        if rank.poll() is None:
            _gone(rank)
        watch.close()


def test_a_holder_killed_and_left_a_zombie_counts_as_gone(tmp_path):
    """A rank killed with its launcher is left to its pid namespace's init, which in a container (a simulated node)
    may never reap it: the zombie keeps its pid and start time, but no descriptor, so its lock is removed."""
    root = tmp_path / "ext"
    lock = root / "py311_cpu" / "deepspeed_shm_comm" / "lock"
    lock.parent.mkdir(parents=True)
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {BUILDER!r}, sys.argv[1]], stdout=subprocess.PIPE, text=True)\n"
        "print(child.pid, child.stdout.readline().strip(), flush=True)\n"
        "time.sleep(600)  # never waits for the child: once killed it stays a zombie\n"), str(lock)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "TORCH_EXTENSIONS_DIR": str(root)})
    try:
        pid, state = parent.stdout.readline().split()
        assert state == "held"
        watch = jitlocks.LockWatch()
        watch.scan([int(pid)])
        assert watch.building and watch.release_orphans() == []
        os.kill(int(pid), signal.SIGKILL)
        deadline = time.monotonic() + 30
        while jitlocks._started(int(pid)) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().rsplit(")", 1)[1].split()[0] == "Z"  # still there, unreaped
        assert watch.release_orphans() == [os.path.realpath(lock)] and not lock.exists()
        watch.scan([int(pid)])
        assert not watch.building
    finally:
        _gone(parent)
