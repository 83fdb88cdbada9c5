"""Process helpers for the simulated cluster: root check, the machine-wide lock, liveness, reaping."""

from __future__ import annotations

import fcntl
import os
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
