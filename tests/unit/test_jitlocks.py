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
