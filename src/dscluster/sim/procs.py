"""Process helpers for the simulated cluster: root check, the machine-wide lock, liveness, reaping."""

from __future__ import annotations

import fcntl
import os
import signal
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from dscluster.errors import PermissionNeeded
from dscluster.i18n import tr
from dscluster.sim.names import RUNTIME_ROOT


def require_root() -> None:
    if os.geteuid() != 0:
        raise PermissionNeeded(tr("the simulated cluster needs root (network namespaces, veths, a bridge, sshd)"),
                               tr("run it as root: sudo dscluster sim up 3"))


@contextmanager
def global_lock() -> Iterator[None]:
    """Serialize up/down across processes: subnets and interface names are machine-wide."""
    RUNTIME_ROOT.mkdir(parents=True, exist_ok=True)
    with open(RUNTIME_ROOT / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def reap(pids: Iterable[int | None]) -> None:
    """Collect the exit status of those that are our own children (the `unshare` launchers started by
    this process), so they do not linger as zombies in a long-lived caller such as a test session."""
    for pid in pids:
        if not pid:
            continue
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _signal(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _wait_gone(pids: set[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)


def terminate(pids: Iterable[int | None], *, grace: float = 0.0, wait: float = 10.0) -> None:
    """End the simulation's own processes, by PID: SIGTERM and up to `grace` seconds to exit cleanly
    (sshd, a daemon that removes its pid file), then SIGKILL for what is left (grace 0: SIGKILL at once,
    for processes whose namespace goes away anyway), wait up to `wait` seconds until they are gone, and
    reap those that are this process's children. This process itself is never signalled."""
    targets = {p for p in pids if p and p != os.getpid() and alive(p)}
    if grace > 0:
        _signal(targets, signal.SIGTERM)
        _wait_gone(targets, grace)
    _signal({p for p in targets if alive(p)}, signal.SIGKILL)
    _wait_gone(targets, wait)
    reap(targets)


def namespace_pids(pid1: int) -> list[int]:
    """Every process in the PID namespace whose init (as seen from here) is `pid1`: one node's processes."""
    try:
        ns = os.readlink(f"/proc/{pid1}/ns/pid")
    except OSError:
        return []
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") == ns:
                    found.append(int(entry))
            except OSError:
                continue
    return found


def freeze(pid1: int, stop: bool = True) -> int:
    """SIGSTOP (or SIGCONT, stop=False) every process of a node: a kernel stall, a hung NFS mount, a node
    that stops answering without closing a connection. Twice, for what a process forked meanwhile."""
    pids: set[int] = set()
    for _ in range(2 if stop else 1):
        new = set(namespace_pids(pid1)) - pids
        _signal(new, signal.SIGSTOP if stop else signal.SIGCONT)
        pids |= new
    return len(pids)


def child_of(pid: int, deadline: float) -> int | None:
    """The first child of `pid` (unshare's forked child = the node's PID 1)."""
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
                kids = f.read().split()
        except OSError:
            return None
        if kids:
            return int(kids[0])
        time.sleep(0.005)
    return None


def start_time(pid: int | None) -> int | None:
    """When the process started (clock ticks since boot, /proc/PID/stat field 22), None if it is gone: with its
    PID, what identifies one process for good (a PID alone is reused once the PIDs wrap)."""
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def remember(entry: dict, key: str, pid: int | None) -> None:
    """Record a process of the simulation in its state `entry`: its PID under `key`, its start time beside it."""
    entry[key], entry[f"{key}_start"] = pid, start_time(pid)


def recorded(entry: dict, key: str, *, strict: bool = True) -> int | None:
    """The PID recorded under `key` when that very process still runs (same start time), else None: a PID
    recorded for a process that died (a crashed node's launcher) and reused since is never signalled. A state
    written without start times identifies nothing (strict, before a signal); only liveness, otherwise."""
    pid = entry.get(key)
    start = entry.get(f"{key}_start")
    if start is None and not strict:
        return pid if alive(pid) else None
    return pid if pid and start is not None and start_time(pid) == start and alive(pid) else None
