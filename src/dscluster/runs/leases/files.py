"""GPU leases on storage: one JSON file per run's claim (runs/leases/rules.Claim) in a leases directory, changed only
under one lock (flock on its `lock` file), so a check and a take are one atomic step for every launcher on
every machine that mounts the directory.

Where: `<shared>/.dscluster/leases/` for a cluster's runs (every user's launches of that cluster meet there),
`$DSCLUSTER_HOME/leases/` for runs on this machine without a cluster.

Several OS users launch into one directory, so it is made sticky and world-writable (mode 1777, as /tmp): anyone
may add a claim, only a claim's owner (or root, or the directory's owner) may replace or remove it. What a
claim says is checked against its file: a claim whose `owner` is not its file's owner is shown as its
file's owner's (a user cannot make their claim look like someone else's), a claim file that is a symlink, a
hard link or not a plain file is ignored, and a stale claim of another user (that this user cannot remove)
is simply not counted. docs/trust-model.md says what this does not protect against.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import time
from dataclasses import replace
from pathlib import Path

from dscluster import fsutil, paths
from dscluster.errors import ClusterError
from dscluster.i18n import tr
from dscluster.runs.leases.rules import Claim, Holder
from dscluster.runs.records.owner import user_name

LOCK = "lock"
LOCK_TIMEOUT = 60.0  # seconds to wait for another launcher holding the lock
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def cluster_dir(shared: Path) -> Path:
    from dscluster.cluster.identity import leases_dir  # noqa: PLC0415

    return leases_dir(shared)


def local_dir() -> Path:
    return paths.home() / "leases"


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat's fields from the state on (field 3: the state; field 22: the start time)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return text[text.rfind(")") + 2:].split()


def process_started(pid: int) -> str | None:
    """The start time of process `pid` (/proc's field 22, clock ticks since boot), None when unknown."""
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 else None


def this_holder(pid: int | None = None) -> Holder:
    pid = os.getpid() if pid is None else int(pid)
    return Holder(socket.gethostname(), pid, process_started(pid))


def holder_alive(holder: Holder) -> bool | None:
    """True/False for a holder on this host (its pid alive, and the same process: its start time); None for
    one on another host (only its heartbeat tells)."""
    if holder.host != socket.gethostname():
        return None
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: alive
    fields = _stat_fields(holder.pid)
    if fields[:1] in (["Z"], ["X"]):
        return False  # killed, not yet reaped (a container without an init): gone all the same
    started = fields[19] if len(fields) > 19 else None
    return started is None or holder.started is None or started == holder.started


def _name(run_id: str) -> str:
    if not run_id or "/" in run_id or run_id.startswith("."):
        raise ValueError(f"not a run id: {run_id!r}")
    return f"{run_id}.json"


class LeaseBoard:
    """The claims of one leases directory, under its lock while the `with` block runs."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._dfd = -1
        self._lock = -1

    def __enter__(self) -> LeaseBoard:
        try:
            fsutil.ensure_dir(self.directory, 0o1777)
            self._dfd = fsutil.open_dir(self.directory)
            self._lock = _open_lock(self._dfd)
        except OSError as err:
            self.__exit__()
            raise ClusterError(tr("the GPU leases directory {path} cannot be used: {err}", path=self.directory,
                                  err=err),
                               tr("make it writable for every user who launches, as the owner of {parent}: "
                                  "install -d -m 1777 {path} (dscluster up, sim up and the node agent make it)",
                                  parent=self.directory.parent, path=self.directory)) from None
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self.__exit__()
                    raise ClusterError(tr("the GPU leases lock {path} was held for {s:.0f}s by another launch",
                                          path=self.directory / LOCK, s=LOCK_TIMEOUT),
                                       tr("try again; if it stays, find the process holding it: fuser -v {path}",
                                          path=self.directory / LOCK)) from None
                time.sleep(0.05)

    def __exit__(self, *_: object) -> None:
        for fd in (self._lock, self._dfd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._lock = self._dfd = -1

    def claims(self) -> tuple[Claim, ...]:
        return _read_all(self._dfd)

    def get(self, run_id: str) -> Claim | None:
        return next((c for c in self.claims() if c.run_id == run_id), None)

    def write(self, claim: Claim) -> None:
        fsutil.atomic_write_json(self.directory / _name(claim.run_id), claim.to_json(), 0o644)

    def remove(self, run_id: str) -> bool:
        """Remove a claim file; False when it is another user's (the sticky directory keeps it)."""
        try:
            os.unlink(_name(run_id), dir_fd=self._dfd)
        except FileNotFoundError:
            return True
        except PermissionError:
            return False
        return True


def _open_lock(dfd: int) -> int:
    try:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=dfd)
    except PermissionError:  # another user's lock file: a shared lock needs only reading (local filesystems)
        return os.open(LOCK, os.O_RDONLY | _NOFOLLOW | _CLOEXEC, dir_fd=dfd)
    if os.fstat(fd).st_uid == os.geteuid():
        os.fchmod(fd, 0o666)
    return fd


def _read_all(dfd: int) -> tuple[Claim, ...]:
    out = []
    with fsutil.opened_dir(dfd) as rfd:
        names = os.listdir(rfd)
    for name in sorted(names):
        if name.endswith(".json") and not name.startswith("."):
            claim = _read_one(dfd, name)
            if claim is not None:
                out.append(claim)
    return tuple(out)


def _read_one(dfd: int, name: str) -> Claim | None:
    """One claim, or None for anything that is not a plain claim file named after its run."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC, dir_fd=dfd)  # a FIFO never blocks
    except OSError as err:
        if err.errno not in (errno.ELOOP, errno.ENOENT, errno.EACCES):
            raise
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > 1 << 20:
            return None
        try:
            claim = Claim.from_json(json.loads(f.read()))
        except (ValueError, KeyError, TypeError):
            return None
    if _name(claim.run_id) != name:
        return None
    file_owner = user_name(st.st_uid)
    if st.st_uid != 0 and claim.owner != file_owner:
        claim = replace(claim, owner=file_owner)  # a claim speaks for its file's owner only
    return claim


def read_claims(directory: Path) -> tuple[Claim, ...]:
    """Every claim in `directory`, without the lock (for views: each file is whole, as renamed in)."""
    try:
        dfd = fsutil.open_dir(directory)
    except OSError:
        return ()
    try:
        return _read_all(dfd)
    finally:
        os.close(dfd)
