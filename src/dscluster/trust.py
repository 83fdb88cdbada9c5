"""The privilege boundary between the launching user and the node user, in one place.

The rule: **the launching user never executes, unpickles, or follows a path from anything the node user
can write.** The node user is every rank, every notebook kernel and anyone holding the lab token; the
launching user runs `dscluster launch`, `restart`, `stop`, `ckpt`, `sim up` (often root). Between them sits
the shared storage, which the node user writes. So, for the launching user:

- Data from the shared storage is parsed as data: JSON, or tensors through `load_tensors` /
  `weights_only_loads` (torch.load with weights_only=True and `ALLOWED`, the few plain types DeepSpeed and
  the trainer save; a pickle that names anything else is refused, never run).
- Paths and programs come from where only the launching user writes (`private_dir`: its own state
  directory), never from a run record's say-so: the cluster's state directory (its ssh wrapper, identity,
  known_hosts) is `own_state_dir`'s answer, and the files DeepSpeed's runner reads (hostfile, environment
  file) are written to `runner_dir`, never into the run directory.
- Files it creates or removes in a directory the node user can write go through directory descriptors with
  O_NOFOLLOW (dscluster/fsutil.py), never by name.

docs/trust-model.md lists every file that crosses the boundary and why a swap there changes nothing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pickle
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from dscluster import fsutil, paths
from dscluster.errors import ConfigError, DsclusterError, PermissionNeeded
from dscluster.i18n import tr

_ID_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


# ---- the launching user's own state ------------------------------------------------------------------
def _check_private(fd: int, path: Path) -> None:
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise PermissionNeeded(tr("{path} is not a private directory of this user", path=path),
                               tr("remove it (someone else may have created it) and run again"))


def private_dir(*parts: str, create: bool = True) -> Path:
    """<DSCLUSTER_HOME>/<parts...>: a directory only the launching user writes (0700, its own, reached
    without a symlink or a directory another user can change). Raises PermissionNeeded otherwise."""
    for part in parts:
        if not _ID_OK.match(part):
            raise ConfigError(tr("{name!r} is not a valid name", name=part), tr("use letters, digits, . _ -"))
    path = Path(os.path.abspath(paths.home().joinpath(*parts)))
    try:
        fd, trusted = fsutil._walk(path, create=create, mode=0o700)  # noqa: SLF001 - the one rule
    except FileNotFoundError:
        raise
    except OSError as err:
        raise PermissionNeeded(tr("{path} cannot be used as private state: {err}", path=path, err=err),
                               tr("check DSCLUSTER_HOME: it must be a directory only you can write")) from None
    try:
        if not trusted:
            raise PermissionNeeded(tr("{path} is reached through a directory another user can write", path=path),
                                   tr("point DSCLUSTER_HOME at a directory only you can write"))
        _check_private(fd, path)
        if create and stat.S_IMODE(os.fstat(fd).st_mode) != 0o700:
            with fsutil.opened_dir(fd) as rfd:
                os.fchmod(rfd, 0o700)
    finally:
        os.close(fd)
    return path


def runner_dir_path(run_id: str) -> Path:
    """runner_dir's path, nothing created (a dry run shows it)."""
    return paths.home() / "runs" / run_id


def runner_dir(run_id: str) -> Path:
    """Where the supervisor writes what DeepSpeed's runner reads (hostfile, environment file) for run
    `run_id`: <DSCLUSTER_HOME>/runs/<id>/, the launching user's alone. The run directory on the shared
    storage belongs to the node user, who could remove or swap a file there between write and read."""
    return private_dir("runs", run_id)


def remove_runner_dir(run_id: str) -> None:
    """The run's runner_dir, once no attempt will start again (best effort: it holds a few small files)."""
    import shutil  # noqa: PLC0415

    path = runner_dir_path(run_id)
    if _ID_OK.match(run_id) and is_private_dir(path):
        shutil.rmtree(path, ignore_errors=True)


def is_private_dir(path: str | os.PathLike) -> bool:
    """True when `path` is a directory of this user that no other user could have changed, nor any
    directory on the way to it (fsutil's rule)."""
    try:
        fd, trusted = fsutil._walk(path)  # noqa: SLF001
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        return trusted and st.st_uid == os.geteuid() and not st.st_mode & 0o022
    finally:
        os.close(fd)


def check_local_restart(run_dir: str | os.PathLike, run_id: str) -> None:
    """A run restarted on this machine runs the program its record names as the launching user: the record
    must come from a directory only this user writes (a local run's own, under DSCLUSTER_HOME), never from
    the shared storage, where the node user could have rewritten it. Raises PermissionNeeded otherwise."""
    if not is_private_dir(run_dir):
        raise PermissionNeeded(
            tr("run {run_id}'s record lies in {path}, which another user can write: restarting it on this machine "
               "would run the program that record names as you", run_id=run_id, path=run_dir),
            tr("launch the program again yourself (dscluster launch --local N PROGRAM ...), or restart the run "
               "on its cluster's nodes (without --local)"))


def own_state_dir(name: str, recorded: str | os.PathLike | None) -> Path:
    """The cluster state directory (identity, ssh_config, known_hosts, the ssh wrapper) for a cluster of a
    run record: the recorded one only when it is the launching user's own private directory holding an
    identity, else the default for the cluster's name under DSCLUSTER_HOME. A record the node user
    rewrote cannot name a directory of its own (with its own `ssh`)."""
    if recorded is not None:
        path = Path(os.path.abspath(recorded))
        if is_private_dir(path):
            with contextlib.suppress(OSError):
                fd = fsutil.open_file(path / "id_ed25519")
                os.close(fd)
                return path
    candidates = [paths.home() / "clusters" / name, paths.home() / "sims" / name / "cluster"]
    for path in candidates:
        if is_private_dir(path) and (path / "id_ed25519").is_file():
            return path
    return candidates[0]


# ---- tensors from the shared storage -----------------------------------------------------------------
def _allowed() -> list:
    """The globals a checkpoint of DeepSpeed and the trainer may name besides tensors and plain
    containers (what torch's weights-only unpickler admits on its own). Each is a plain record type."""
    import argparse  # noqa: PLC0415
    import collections  # noqa: PLC0415

    allowed: list = [argparse.Namespace, collections.OrderedDict, collections.defaultdict, set, frozenset]
    with contextlib.suppress(ImportError):
        from deepspeed.runtime.zero.config import ZeroStageEnum  # noqa: PLC0415

        allowed.append(ZeroStageEnum)
    with contextlib.suppress(ImportError):
        from deepspeed.runtime.fp16.loss_scaler import DynamicLossScaler, LossScaler  # noqa: PLC0415

        allowed += [LossScaler, DynamicLossScaler]
    with contextlib.suppress(ImportError):
        from deepspeed.utils.tensor_fragment import fragment_address  # noqa: PLC0415

        allowed.append(fragment_address)
    return allowed


class RefusedPickle(DsclusterError):
    """A file from the shared storage names code to run when unpickled: refused, never loaded."""


def _refused_pickle(path: object, err: Exception) -> RefusedPickle:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    # torch's own words for what the pickle asked for, e.g. "unsupported GLOBAL posix.system ..."
    why = next((line for line in lines if "GLOBAL" in line or "nsupported" in line), lines[-1] if lines else "")
    return RefusedPickle(tr("{path} is not plain tensors and data: it was not loaded ({why})", path=path,
                            why=why.strip()[:200]),
                         tr("DeepSpeed and dscluster.train never write such a file: someone who can write the run "
                            "directory changed it. Move it aside and use another step"))


_FORCE = "TORCH_FORCE_WEIGHTS_ONLY_LOAD"
_force_lock = threading.RLock()


@contextlib.contextmanager
def weights_only_loads(what: object = None) -> Iterator[None]:
    """Every torch.load in this block (DeepSpeed's own loaders too, which ask for weights_only=False) reads
    with the weights-only unpickler and the allow-list: a pickle naming any other global is refused
    (RefusedPickle, naming `what`)."""
    import torch  # noqa: PLC0415

    with _force_lock:
        old = os.environ.get(_FORCE)
        os.environ[_FORCE] = "1"
        try:
            with torch.serialization.safe_globals(_allowed()):
                try:
                    yield
                except pickle.UnpicklingError as err:
                    raise _refused_pickle(what or tr("a checkpoint file"), err) from None
        finally:
            if old is None:
                os.environ.pop(_FORCE, None)
            else:
                os.environ[_FORCE] = old


def load_tensors(path: str | os.PathLike, *, mmap: bool = True):
    """torch.load of a file the node user may have written: opened by fsutil's no-symlink rule, unpickled
    weights-only with the allow-list, on CPU (memory-mapped: tensor bytes are read only when used)."""
    import torch  # noqa: PLC0415

    fd = fsutil.open_file(path)
    try:
        with weights_only_loads(path):
            # torch.load's mmap takes a path: the descriptor's own, so no name is looked up again.
            return torch.load(f"/proc/self/fd/{fd}", map_location="cpu", mmap=mmap, weights_only=True)
    finally:
        os.close(fd)


def refuse_symlinks(folder: str | os.PathLike, pattern: str = "*") -> None:
    """Before a third-party reader (DeepSpeed's) opens files of `folder` by name: no entry matching
    `pattern` may be a symlink or a hard-linked file, and `folder` itself is reached by fsutil's rule."""
    import fnmatch  # noqa: PLC0415

    fd = fsutil.open_dir(folder)
    try:
        with fsutil.opened_dir(fd) as rfd:
            names = os.listdir(rfd)
        for name in names:
            if not fnmatch.fnmatch(name, pattern):
                continue
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_nlink > 1):
                raise fsutil.UnsafePath(errno.ELOOP, "refusing a symlink or hard link where another user can write",
                                        str(Path(folder) / name))
    finally:
        os.close(fd)


def open_out_dir(path: str | os.PathLike, setting: str = "--out") -> int:
    """A lookup descriptor of folder `path` (made if missing) for writing results into, often inside a run
    directory the node user owns: reached by fsutil's rule, so a planted symlink (`<run>/export` pointing
    at a directory only root may write) is a ConfigError naming the fix, never written through. Make every
    name in it relative to the descriptor (O_EXCL | O_NOFOLLOW, renamed within it)."""
    try:
        return fsutil.open_dir(path, create=True)
    except fsutil.UnsafePath as err:
        raise ConfigError(tr("{path} is reached through a symlink another user planted: {err}", path=path,
                             err=err.strerror), tr("remove it, or pass another --out"), setting=setting) from None


def copy_into(src: str | os.PathLike, dfd: int, name: str) -> bool:
    """Copy file `src` (opened by fsutil's rule: a symlink or hard link planted where another user can
    write is skipped, returns False) to `name` in directory `dfd`: a temp file made with O_EXCL |
    O_NOFOLLOW, then renamed within the directory."""
    import secrets  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    try:
        sfd = fsutil.open_file(src)
    except fsutil.UnsafePath:
        return False
    with os.fdopen(sfd, "rb") as fsrc:
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as fdst:
                shutil.copyfileobj(fsrc, fdst, 1 << 20)
                fdst.flush()
                os.fsync(fdst.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    return True
