"""Atomic state writes (temp file in the same directory + fsync + os.replace: a reader never sees a half-written
file, a crash mid-write leaves the previous version intact) and opening state files without following a
symlink that another user could have planted.

Why symlinks matter here: run directories live on shared storage that the cluster's node user (every
rank, every notebook) can write, while the supervisor that writes run.json, events.jsonl and the
launcher log runs as the launching user (often root). If such a process opened `logs/launcher.log`
by name, the node user could replace it (or `logs/`, or the run directory) with a symlink to a file
only the launching user may write, and have it written there. `open_file`/`open_dir` resolve a path
one component at a time: symlinks are followed only while every directory so far is one that no
other user can change (owned by this user or root, not group/world-writable, or sticky with the entry
owned by this user or root); from the first directory another user can change on, every component is
opened with O_NOFOLLOW relative to its parent's descriptor, so a planted symlink is refused (ELOOP)
and a swap between check and use is impossible. A file to be read or written must be a regular file
(a planted FIFO would block the writer) with one link (a planted hard link to someone else's file).

The walk holds O_PATH descriptors (Linux; a plain read-only open elsewhere): looking a name up in a
directory needs only search (x) permission, never read (r), so the walk reaches every directory a path
lookup by name reaches: a shared directory under root's home that the node user may only traverse
(the ACL `sim up` sets), a mode-711 home, an NFS export. Entries are stat'ed, made, opened, renamed and
unlinked relative to those descriptors; only a directory's fsync opens it for reading.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import threading
from pathlib import Path
from typing import Any

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# A directory handle for lookups only: O_PATH needs search permission alone (no read), and openat,
# fstatat, mkdirat, renameat, unlinkat and readlinkat all take it as their directory.
_LOOKUP = (getattr(os, "O_PATH", 0) or os.O_RDONLY) | _DIRECTORY | _CLOEXEC
_MAX_LINKS = 40  # as the kernel's own limit on symlinks in one lookup


class UnsafePath(OSError):
    """A path that crosses a symlink, hard link or special file planted where another user can write."""


def _others_can_change(st: os.stat_result, me: int) -> bool:
    """True when a user other than `me` (and root) can add, remove or rename entries of this directory."""
    if st.st_uid not in (me, 0):
        return True
    return bool(st.st_mode & 0o022)


def _entry_pinned(dir_st: os.stat_result, entry_uid: int, me: int) -> bool:
    """In a sticky directory (e.g. /tmp) others may add entries but not rename or remove ours."""
    return bool(dir_st.st_mode & stat.S_ISVTX) and dir_st.st_uid in (me, 0) and entry_uid in (me, 0)


def _walk(path: str | os.PathLike, *, create: bool = False, mode: int = 0o755) -> tuple[int, bool]:
    """A descriptor of directory `path` and whether the way to it is trusted (no other user could have
    changed any directory on it). See the module docstring for the rule; `create` makes the missing
    directories (with `mode`), like mkdir -p."""
    me = os.geteuid()
    parts = list(Path(os.path.abspath(path)).parts[1:])
    fd = os.open("/", _LOOKUP)
    trusted, links = True, 0
    try:
        while parts:
            name = parts.pop(0)
            if name in ("", "."):
                continue
            dir_st = os.fstat(fd)
            try:
                entry = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if not create or name == "..":
                    raise
                try:
                    os.mkdir(name, mode, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile (by anyone): the checks below apply to it as to any entry
                entry = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if trusted and _others_can_change(dir_st, me) and not _entry_pinned(dir_st, entry.st_uid, me):
                trusted = False
            if stat.S_ISLNK(entry.st_mode):
                if not trusted:
                    raise UnsafePath(errno.ELOOP, "refusing to follow a symlink where another user can write",
                                     os.path.join(str(path), ""))
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
                target = Path(os.readlink(name, dir_fd=fd))
                if target.is_absolute():
                    os.close(fd)
                    fd = -1
                    fd = os.open("/", _LOOKUP)
                    parts = list(target.parts[1:]) + parts
                else:
                    parts = list(target.parts) + parts
                continue
            if name == ".." and not trusted:
                raise UnsafePath(errno.EACCES, "refusing '..' where another user can write", str(path))
            nxt = _open_subdir(fd, name, Path(path))
            os.close(fd)
            fd = nxt
        return fd, trusted
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise


def _open_subdir(dfd: int, name: str, path: Path) -> int:
    """A lookup descriptor of directory `name` in `dfd`, never through a symlink: one swapped in since
    the caller's stat is refused (O_DIRECTORY|O_NOFOLLOW says ENOTDIR or ELOOP for it)."""
    try:
        return os.open(name, _LOOKUP | _NOFOLLOW, dir_fd=dfd)
    except OSError as err:
        if err.errno == errno.ENOTDIR:
            with contextlib.suppress(OSError):
                if stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                    err = OSError(errno.ELOOP, "symlink")
        raise _refused(path, err) from None


def open_dir(path: str | os.PathLike, *, create: bool = False, mode: int = 0o755) -> int:
    """A lookup descriptor (O_PATH|O_DIRECTORY on Linux) of `path`, resolved by the symlink rule above;
    `create`: mkdir -p. Use it as `dir_fd` (open, stat, mkdir, rename, unlink, readlink); it cannot be
    read, listed, fsynced or fchmod'ed itself (open "." relative to it for that)."""
    return _walk(path, create=create, mode=mode)[0]


def make_dir(path: str | os.PathLike, mode: int = 0o755, *, owner: int | None = None) -> None:
    """mkdir `path` (it must not exist; its parents are made as needed), then give it `mode` and
    `owner`'s uid through its own descriptor: a name another user can swap is never chmod/chowned."""
    path = Path(os.path.abspath(path))
    dfd = open_dir(path.parent, create=True)
    try:
        os.mkdir(path.name, 0o700, dir_fd=dfd)
        fd = os.open(path.name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dfd)
    finally:
        os.close(dfd)
    try:
        if owner is not None:
            os.fchown(fd, int(owner), -1)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def unlink(path: str | os.PathLike, *, missing_ok: bool = True) -> None:
    """Remove the entry `path` (a file, or a symlink itself: never what it points to) through its
    folder's descriptor, the folder reached by open_dir's rule: a directory on the way that another
    user swapped for a symlink is refused, so nothing outside the intended folder is removed."""
    path = Path(os.path.abspath(path))
    dfd = open_dir(path.parent)
    try:
        os.unlink(path.name, dir_fd=dfd)
    except FileNotFoundError:
        if not missing_ok:
            raise
    finally:
        os.close(dfd)


def ensure_dir(path: str | os.PathLike, mode: int = 0o755) -> bool:
    """mkdir -p `path` by open_dir's rule and, when this user owns it, give it `mode` through its own
    descriptor (a `path` another user swapped for a symlink is refused, never chmod-ed through).
    Returns whether it is this user's."""
    fd = open_dir(path, create=True, mode=mode)
    try:
        if os.fstat(fd).st_uid != os.geteuid():
            return False
        with opened_dir(fd) as rfd:
            os.fchmod(rfd, mode)
        return True
    finally:
        os.close(fd)


@contextlib.contextmanager
def opened_dir(dfd: int):
    """The directory behind lookup descriptor `dfd` opened for reading (to list, fchmod or fsync it)."""
    fd = os.open(".", os.O_RDONLY | _DIRECTORY | _CLOEXEC, dir_fd=dfd)
    try:
        yield fd
    finally:
        os.close(fd)


def _refused(path: Path, err: OSError) -> OSError:
    if err.errno == errno.ELOOP and not isinstance(err, UnsafePath):
        return UnsafePath(errno.ELOOP, "refusing to follow a symlink where another user can write", str(path))
    return err


def open_file(path: str | os.PathLike, flags: int = os.O_RDONLY, mode: int = 0o644, *, _links: int = 0) -> int:
    """os.open(path, flags, mode) by the symlink rule above: no symlink is followed, and no hard-linked
    or special file is opened, where another user could have planted it. Raises UnsafePath (an OSError)
    for a path that breaks the rule, the usual OSErrors otherwise."""
    path = Path(os.path.abspath(path))
    me = os.geteuid()
    try:
        dfd, trusted = _walk(path.parent)
    except OSError as err:
        raise _refused(path, err) from None
    try:
        dir_st = os.fstat(dfd)
        if trusted:
            try:
                entry = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                entry = None
            if entry is not None and stat.S_ISLNK(entry.st_mode) and (
                    not _others_can_change(dir_st, me) or _entry_pinned(dir_st, entry.st_uid, me)):
                if _links >= _MAX_LINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
                target = os.readlink(path.name, dir_fd=dfd)  # our own symlink: follow it by the same rule
                return open_file(path.parent / target, flags, mode, _links=_links + 1)
        try:
            fd = os.open(path.name, flags | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK, mode, dir_fd=dfd)
        except OSError as err:
            raise _refused(path, err) from None
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        pinned = trusted and (not _others_can_change(dir_st, me) or _entry_pinned(dir_st, st.st_uid, me))
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(errno.EINVAL, "not a regular file", str(path))
        if not pinned and st.st_nlink > 1:
            raise UnsafePath(errno.EMLINK, "refusing a hard-linked file where another user can write", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_beneath(base: str | os.PathLike, rel: str | os.PathLike, flags: int = os.O_RDONLY) -> int:
    """A regular file `rel` inside directory `base`, where no component of `rel` may be a symlink or
    `..`, whoever owns it: for readers that serve files of a run directory (over HTTP) and must never
    serve anything outside it. `base` itself is reached by open_dir's rule."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise UnsafePath(errno.EINVAL, "not a path inside the directory", str(rel))
    fd = open_dir(base)
    try:
        for name in parts[:-1]:
            nxt = _open_subdir(fd, name, Path(base) / rel)
            os.close(fd)
            fd = nxt
        try:
            out = os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
        except OSError as err:
            raise _refused(Path(base) / rel, err) from None
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(out).st_mode):
            raise UnsafePath(errno.EINVAL, "not a regular file", str(Path(base) / rel))
        os.set_blocking(out, True)
    except BaseException:
        os.close(out)
        raise
    return out


def read_bytes(path: str | os.PathLike, offset: int = 0, limit: int | None = None) -> bytes:
    """The bytes of a state file from `offset` (at most `limit`), opened by open_file's rule."""
    fd = open_file(path)
    with os.fdopen(fd, "rb") as f:
        f.seek(offset)
        return f.read() if limit is None else f.read(limit)


_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT
_REPLACING = threading.Lock()


def open_append(path: str | os.PathLike, mode: int = 0o644):
    """A binary file object appending to `path` (created if missing), opened by open_file's rule.

    For a log or journal whose name is the caller's: a symlink, hard link or special file planted in
    its place is unlinked (the entry itself, never what it points to) and a fresh file made with
    O_EXCL, so the writer carries on; a directory on the way that breaks the rule still raises."""
    with contextlib.suppress(UnsafePath):
        return os.fdopen(open_file(path, _APPEND, mode), "ab")
    with _REPLACING:  # one at a time (a run's channels open one log at once); one waiting opens what another made
        with contextlib.suppress(UnsafePath):
            return os.fdopen(open_file(path, _APPEND, mode), "ab")
        path = Path(os.path.abspath(path))
        dfd = open_dir(path.parent)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path.name, dir_fd=dfd)
            fd = os.open(path.name, _APPEND | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode, dir_fd=dfd)
        except FileExistsError:  # a writer of the first kind made it meanwhile (O_CREAT): open that one by the rule
            fd = open_file(path, _APPEND, mode)
        finally:
            os.close(dfd)
    return os.fdopen(fd, "ab")


def fsync_dir(path: str | os.PathLike, *, dir_fd: int | None = None) -> None:
    """Make a rename or a new entry in `path` durable (no-op where directories cannot be opened). With `dir_fd`, a
    lookup descriptor (O_PATH cannot be fsynced): `path` "." opens it again for reading, relative to itself."""
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dirfd(dfd: int) -> None:
    """fsync the directory behind lookup descriptor `dfd`; skipped where this user may not read it."""
    fsync_dir(".", dir_fd=dfd)


def atomic_write_bytes(path: str | os.PathLike, data: bytes, mode: int = 0o644, *, owner: int | None = None) -> None:
    """Write `path` atomically: a temp file made (O_EXCL) in the same directory, opened by descriptor,
    fsynced, given `mode` (and `owner`'s uid, by the descriptor: never by name, which another user could
    swap meanwhile), then renamed over `path` within that directory descriptor. Missing directories
    are made; the directory is reached by open_dir's symlink rule."""
    path = Path(path)
    dfd = open_dir(path.parent, create=True)
    try:
        while True:
            tmp = f".{path.name}.{secrets.token_hex(4)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dfd)
                break
            except FileExistsError:
                continue
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                if owner is not None:
                    os.fchown(f.fileno(), int(owner), -1)
                os.fchmod(f.fileno(), mode)
                os.fsync(f.fileno())
            os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except FileNotFoundError:
                pass
            raise
        _fsync_dirfd(dfd)
    finally:
        os.close(dfd)


def atomic_write_text(path: str | os.PathLike, text: str, mode: int = 0o644, *, owner: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode, owner=owner)


def atomic_write_json(path: str | os.PathLike, obj: Any, mode: int = 0o644) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", mode)


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one JSON line with a single write() so concurrent appenders never interleave lines."""
    line = (json.dumps(record, default=str, separators=(",", ":")) + "\n").encode("utf-8")
    with open_append(path) as f:
        os.write(f.fileno(), line)  # one write() with O_APPEND, past the file object's buffer


def read_jsonl(path: str | os.PathLike, offset: int = 0) -> tuple[list[dict], int]:
    """Read complete JSON lines from byte `offset`; returns (records, next_offset). A trailing partial line
    (a writer mid-append) is left for the next call, so a half-written file never breaks a reader."""
    try:
        data = read_bytes(path, offset)
    except (FileNotFoundError, UnsafePath):  # a planted symlink reads as nothing written yet
        return [], offset
    return parse_jsonl(data, offset)


def parse_jsonl(data: bytes, offset: int = 0) -> tuple[list[dict], int]:
    """The complete JSON lines of `data` (read from byte `offset` of a file) and the offset after them."""
    end = data.rfind(b"\n") + 1
    records = []
    for raw in data[:end].splitlines():
        if not raw.strip():
            continue
        try:
            records.append(json.loads(raw))
        except json.JSONDecodeError:
            continue  # a torn line from a crashed writer; skip rather than fail the reader
    return records, offset + end
