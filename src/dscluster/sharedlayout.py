"""Who owns which directory of the shared storage: the one ownership model (docs/trust-model.md, "Who owns
what on the shared storage"), made right by `sim up`, `up`, `user add` and root's first launch, whatever ran
before (a demo first, an older layout).

    <shared>/                    root, group the node user's own, 1775 (sticky): the node user writes its code
                                 and files there, and no one but root renames or replaces runs/, users/, data/
                                 or .dscluster/ (the owner of a directory may rename anything in it, sticky or
                                 not: so it is not the node user's). Where root cannot own files on the storage
                                 (NFS with root_squash) it stays its provider's, and that wall is not there.
    <shared>/.dscluster/         the shared dir's owner (cluster/identity.py)
    COMMON (users/, runs/, data/, prometheus/runs/, .dscluster-doctor/)
                                 root, 1777 (sticky, as /tmp): everyone makes their own entries there and no
                                 one but root renames or removes another's. Where root cannot own files on
                                 the storage (NFS with root_squash), the shared dir's owner, 1777.
    users/NAME, runs/ID, data/X  whoever made them (a person, 0755; root's cluster runs: the node user)

A directory of COMMON made by someone else (a person, any other user) is refused, never taken over: it may
hold their files. Everything is done through directory descriptors (fsutil's rule): a name the node user
swapped for a symlink is never chmod-ed or chown-ed through.
"""

from __future__ import annotations

import contextlib
import errno
import grp
import os
import pwd
import secrets
import stat
from pathlib import Path

from dscluster import fsutil
from dscluster.errors import PermissionNeeded
from dscluster.i18n import tr

COMMON = ("users", "runs", "data", "prometheus/runs", ".dscluster-doctor")
MODE = 0o1777
_OPEN_FILE = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _subdir(dfd: int, name: str, mode: int) -> int:
    """Directory `name` in `dfd` (made with `mode` when missing), opened without following a symlink."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o700 if mode & 0o7000 else mode, dir_fd=dfd)
    return os.open(name, _OPEN, dir_fd=dfd)


def _settle(fd: int, path: Path, owners: tuple[int, ...], mode: int) -> str | None:
    """Give the directory behind `fd` its owner (root where it can be, else the shared dir's) and `mode`;
    a sentence when it cannot be made right."""
    st = os.fstat(fd)
    if st.st_uid not in owners:
        return tr("{path} belongs to uid {uid}, not to root or the shared directory's owner: move it away "
                  "(it may hold that user's files), then run the same command again", path=path, uid=st.st_uid)
    if os.geteuid() == 0 and st.st_uid != 0:
        with contextlib.suppress(PermissionError):  # NFS with root_squash: stays the shared dir's owner's
            os.fchown(fd, 0, 0)
            st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        return None if stat.S_IMODE(st.st_mode) == mode else tr(
            "{path} has mode {have:o}, not {want:o}; its owner (uid {uid}) runs: chmod {want:o} {path}",
            path=path, have=stat.S_IMODE(st.st_mode), want=mode, uid=st.st_uid)
    if stat.S_IMODE(st.st_mode) != mode:
        os.fchmod(fd, mode)
    return None


def ensure(shared: str | os.PathLike, names: tuple[str, ...] = COMMON) -> list[str]:
    """Make `names` (of COMMON) under the shared dir as the model says; returns what could not be made right
    (empty: all is). Run as root (`sim up`, `user add`, root's launch); as another user it fixes only the
    modes of what that user owns."""
    shared = Path(os.path.abspath(shared))
    problems: list[str] = []
    try:
        top = fsutil.open_dir(shared)
    except OSError as err:
        return [tr("cannot open the shared directory {path}: {err}", path=shared, err=err)]
    try:
        st = os.fstat(top)
        owners = (0, st.st_uid, *_group_owner(st.st_gid))
        for name in names:
            parts = name.split("/")
            fds = [top]
            try:
                for i, part in enumerate(parts):
                    last = i == len(parts) - 1
                    fds.append(_subdir(fds[-1], part, MODE if last else 0o755))
                    problem = _settle(fds[-1], shared.joinpath(*parts[:i + 1]), owners, MODE if last else 0o755)
                    if problem:
                        problems.append(problem)
                        break
            except OSError as err:
                reason = tr("a symlink") if err.errno in (errno.ELOOP, errno.ENOTDIR) else err
                problems.append(tr("{path} cannot be made right ({err}): move it away, then run the same command "
                                   "again", path=shared / name, err=reason))
            finally:
                for fd in fds[1:]:
                    os.close(fd)
        if os.geteuid() == 0:
            fd = os.open(".", _OPEN, dir_fd=top)  # a descriptor that can be chown-ed (open_dir's is O_PATH)
            try:
                problems += _settle_root(fd, shared)
            finally:
                os.close(fd)
    finally:
        os.close(top)
    return problems


def _group_members(gid: int) -> set[int]:
    """The uids of the accounts in group `gid`: those whose own group it is and those it lists."""
    members = {p.pw_uid for p in pwd.getpwall() if p.pw_gid == gid}
    with contextlib.suppress(KeyError, OverflowError):
        for name in grp.getgrgid(gid).gr_mem:
            with contextlib.suppress(KeyError):
                members.add(pwd.getpwnam(name).pw_uid)
    return members


def _group_owner(gid: int) -> tuple[int, ...]:
    """The one account (not root) group `gid` holds: the node user whose own group gives it the shared dir."""
    members = _group_members(gid)
    return tuple(members) if len(members) == 1 and 0 not in members else ()


def _settle_root(top: int, shared: Path) -> list[str]:
    """The shared dir itself: root's, so that the node user who provides it (or anyone) cannot rename or
    replace runs/, users/, data/ or .dscluster/ (a directory's owner may rename any entry of it, sticky or not);
    its provider keeps writing there through its own group, and sticky, so it renames only its own entries.
    Where root cannot own it (NFS with root_squash), it stays as it is: that wall is not there."""
    st = os.fstat(top)
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid == 0:
        if mode & 0o022 and not mode & stat.S_ISVTX:  # others write it: only their own entries move
            os.fchmod(top, mode | stat.S_ISVTX)
        return []
    if not _group_members(st.st_gid) <= {st.st_uid}:
        return [tr("{path} belongs to uid {uid}, who can rename or replace runs/, users/ and data/ in it, and its "
                   "group {gid} is not that user's alone: run chgrp GROUP {path} with a group of that user alone "
                   "(its own), then the same command again", path=shared, uid=st.st_uid, gid=st.st_gid)]
    try:
        os.fchown(top, 0, st.st_gid)
    except PermissionError:  # NFS with root_squash: the provider's, as it was
        return []
    # its owner's rights go to its group (the owner's alone), the others' stay as they were
    os.fchmod(top, stat.S_ISVTX | 0o700 | ((mode >> 3) & 0o070) | (mode & 0o007))
    return []


def make_right(shared: str | os.PathLike) -> None:
    """`ensure` every directory of COMMON, or refuse with what is wrong and its fix (`sim up`, `user add`)."""
    problems = ensure(shared)
    if problems:
        raise PermissionNeeded(tr("the shared directory {path} is not laid out as dscluster's ownership model "
                                  "says:\n  {problems}", path=shared, problems="\n  ".join(problems)),
                               tr("fix what is named above (docs/trust-model.md, \"Who owns what on the shared "
                                  "storage\"), then run the same command again"))


def make_file_for(path: str | os.PathLike, uid: int, mode: int = 0o644) -> None:
    """An empty `path` owned by `uid` with `mode`, unless one exists: made under a temporary name, given its
    owner through its descriptor, then linked into place, so it never exists as this (root's) file. The
    supervisor (root) writes DeepSpeed's and a Trainer's rows into metrics.jsonl, which rank 0 (the node user)
    appends to too (`dscluster.log`): the file is the ranks' user's from its first moment."""
    path = Path(os.path.abspath(path))
    dfd = fsutil.open_dir(path.parent)
    tmp = f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FILE, 0o600, dir_fd=dfd)
        try:
            os.fchown(fd, int(uid), -1)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dfd)
        os.close(dfd)


def files_left(shared: str | os.PathLike) -> dict[int, list[Path]]:
    """uid -> its entries at the top of users/, runs/ and data/: what a removed person leaves behind (`user
    remove` keeps their directory, runs and checkpoints). Their UID is never handed to someone else while any
    is there (node/accounts.py choose_uid): the next person would own them."""
    found: dict[int, list[Path]] = {}
    for name in ("users", "runs", "data"):
        folder = Path(shared) / name
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                found.setdefault(entry.stat(follow_symlinks=False).st_uid, []).append(folder / entry.name)
    return found


def main(argv: list[str] | None = None) -> int:
    """`python -m dscluster.sharedlayout SHARED`, as root where the shared storage is (the master's node
    container, for `user add`): the model made right there; what cannot be is printed, exit 1."""
    import sys  # noqa: PLC0415

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m dscluster.sharedlayout SHARED_DIR", file=sys.stderr)
        return 2
    problems = ensure(args[0])
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
