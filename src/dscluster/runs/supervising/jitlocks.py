"""torch's JIT build lock, left behind by a process of the run that died while it built: the node's watchdog removes it.

torch's extension builder (torch/utils/cpp_extension.py `_jit_compile`, which DeepSpeed's op builder calls) takes
`<build dir>/lock` with `FileBaton.try_acquire`: `os.open(O_CREAT | O_EXCL)`, the descriptor kept open while it
builds, the file removed in a `finally` when the build is done. A rank killed by a signal while it builds (SIGKILL,
an OOM kill, or the SIGTERM a launcher's fail-fast or a teardown sends: Python's default SIGTERM runs no `finally`)
leaves the lock, and every later build of that op waits on it forever in `FileBaton.wait`, printing nothing: the
run's next attempt, and every other job of that user on that cache. The supervisor's own teardowns would make them.

What is certain: the holder is the process whose descriptor is open on the file (O_EXCL: no other process created
it), and once that process is gone nobody can release it. So the watchdog notes, every SCAN_EVERY seconds and just
before it reaps, which of the run's processes hold a `lock` under their torch extensions cache (TORCH_EXTENSIONS_DIR
in their environment, else ~/.cache/torch_extensions of their HOME), and removes such a lock once its holder is gone,
if the same file (device, inode, change time) is still there and no process has it open: a lock another process took
since is another file, kept. A lock whose holder it never saw (taken and orphaned between two scans, or by a process
outside the run) is left: doctor and the launch's preflight name those (doctor/checks_cluster.py `check_jit_lock`).

The same scan says whether a process of the run holds a lock now (`building`): it compiles an op (minutes on a fresh
cache, printing nothing) while the other ranks wait in `FileBaton.wait`; the heartbeat carries it, and the supervisor
counts it as progress against the stall timeout (runs/supervising/watching.py): a first run's build is no hang.
Stdlib only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from dscluster.runs.supervising.reaper import proc_environ

LOCK_NAME = "lock"
SCAN_EVERY = 2.0  # an op build takes tens of seconds at least: a holder is seen long before it could be killed


@dataclass(frozen=True)
class HeldLock:
    path: str
    dev: int
    ino: int
    ctime_ns: int  # with dev and ino, the file itself: a lock made again at once may reuse the inode number


def extensions_root(env: dict[str, str]) -> str | None:
    """Where torch's builder puts its builds for a process with this environment (cpp_extension.py
    `get_default_build_root`: TORCH_EXTENSIONS_DIR, else torch_extensions in the user's cache directory)."""
    if env.get("TORCH_EXTENSIONS_DIR"):
        return os.path.realpath(env["TORCH_EXTENSIONS_DIR"])
    cache = env.get("XDG_CACHE_HOME") or (os.path.join(env["HOME"], ".cache") if env.get("HOME") else None)
    return os.path.realpath(os.path.join(cache, "torch_extensions")) if cache else None


def held_by(pid: int, root: str | None = None) -> list[HeldLock]:
    """The JIT locks process `pid` holds open (none when it is gone or not this user's)."""
    root = root or extensions_root(proc_environ(pid))
    if not root:
        return []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    out = []
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if os.path.basename(target) != LOCK_NAME or not target.startswith(root + os.sep):
                continue
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        out.append(HeldLock(target, st.st_dev, st.st_ino, st.st_ctime_ns))
    return out


def open_elsewhere(path: str) -> bool:
    """Whether a process of this user has `path` open now (asked only before a removal: it reads every fd)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue  # gone, or another user's
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry}/fd/{fd}") == path:
                    return True
            except OSError:
                continue
    return False


def _started(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/PID/stat): a pid reused later is another process. None when it is
    gone or a zombie: a zombie's descriptors are closed, and it stays one as long as nobody reaps it (a rank whose
    launcher was killed with it is left to the pid namespace's init, which in a container may never reap)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if len(fields) < 20 or fields[0] in ("Z", "X") else fields[19]


class LockWatch:
    """The JIT locks the run's processes on this node hold, and their removal once a holder is gone."""

    def __init__(self) -> None:
        self.holders: dict[HeldLock, tuple[int, str | None]] = {}
        self.roots: dict[int, str | None] = {}
        self.next_scan = 0.0
        self.building = False  # at the last scan a process of the run held a lock: it builds (or loads) an op

    def scan(self, pids: list[int]) -> None:
        # Each pid's cache root, read once while it lives (a long run's DataLoader workers come and go: no others kept).
        self.roots = {pid: self.roots[pid] if pid in self.roots else extensions_root(proc_environ(pid)) for pid in pids}
        self.building = False
        for pid in pids:
            for lock in held_by(pid, self.roots[pid]):
                self.holders[lock] = (pid, _started(pid))
                self.building = True

    def release_orphans(self) -> list[str]:
        """Remove each lock whose holder is gone and whose file is still the one it held; the paths removed."""
        removed = []
        for lock, (pid, started) in list(self.holders.items()):
            if started is not None and _started(pid) == started:
                continue  # its holder still lives: it builds, or releases the lock itself
            del self.holders[lock]
            try:
                st = os.stat(lock.path)
                if (st.st_dev, st.st_ino, st.st_ctime_ns) == (lock.dev, lock.ino, lock.ctime_ns) and not \
                        open_elsewhere(lock.path):
                    os.unlink(lock.path)
                    removed.append(lock.path)
            except OSError:
                pass  # released, or removed by someone else
        return removed

    def tick(self, pids: list[int], now: float) -> list[str]:
        """At most every SCAN_EVERY seconds: note the holders among `pids`, remove the orphaned locks."""
        if now < self.next_scan:
            return []
        self.next_scan = now + SCAN_EVERY
        self.scan(pids)
        return self.release_orphans()
