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
