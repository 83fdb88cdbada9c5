"""The simulated nodes' user: non-root, fixed UID (same on every node, as on a real cluster), a login
shell, and an unlocked password entry of `*` (no password exists, yet sshd with UsePAM no accepts
its keys; a `!`-locked account is refused even with a key)."""

from __future__ import annotations

import os
import pwd
import struct
import subprocess
import sys
from pathlib import Path

from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.i18n import tr

SIM_USER = "dscluster"
SIM_UID = 2222


def ensure_user(user: str = SIM_USER, uid: int = SIM_UID) -> pwd.struct_passwd:
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        entry = None
    if entry is None:
        try:
            taken = pwd.getpwuid(uid).pw_name
        except KeyError:
            taken = None
        argv = ["useradd", "--user-group", "--create-home", "--shell", "/bin/bash",
                "--comment", "dscluster simulated node user", user]
        if taken is None:
            argv[1:1] = ["--uid", str(uid)]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        if proc.returncode != 0 and "already exists" not in proc.stderr:
            raise ConfigError(tr("could not create the node user {user}: {err}", user=user, err=proc.stderr.strip()),
                              tr("create it yourself: useradd --create-home --shell /bin/bash {user}", user=user),
                              setting="ssh_user")
        entry = pwd.getpwnam(user)
    if entry.pw_uid == 0:
        raise ConfigError(tr("the node user {user} is root", user=user), tr("choose a non-root user"),
                          setting="ssh_user")
    _unlock(user)
    return entry


def _unlock(user: str) -> None:
    try:
        with open("/etc/shadow", encoding="utf-8") as f:
            locked = any(line.split(":")[0] == user and line.split(":")[1].startswith("!") for line in f)
    except (OSError, IndexError):
        return
    if locked:
        subprocess.run(["usermod", "-p", "*", user], capture_output=True, timeout=30, check=False)


def _can_traverse(path: Path, entry: pwd.struct_passwd) -> bool:
    st = path.stat()
    if st.st_uid == entry.pw_uid:
        return bool(st.st_mode & 0o100)
    acl = _read_acl(path)
    mask = next((p for tag, p, _ in acl if tag == _MASK), 7)
    named = next((p for tag, p, i in acl if tag == _USER and i == entry.pw_uid), None)
    if named is not None:
        return bool(named & mask & 1)
    if st.st_gid == entry.pw_gid:
        return bool(st.st_mode & 0o010)
    return bool(st.st_mode & 0o001)


def blocking_dir(path: Path, entry: pwd.struct_passwd) -> Path | None:
    """The first directory on the way to `path` the user cannot traverse (no x for them), or None."""
    current = Path("/")
    for part in Path(path).resolve().parts[1:]:
        if not _can_traverse(current, entry):
            return current
        current = current / part
    return None


# POSIX ACL xattr ("system.posix_acl_access"): a u32 version header, then (u16 tag, u16 perm, u32 id).
_ACL_VERSION = 2
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_UNDEFINED_ID = 0xFFFFFFFF


def _read_acl(path: Path) -> list[tuple[int, int, int]]:
    try:
        raw = os.getxattr(path, "system.posix_acl_access")
    except OSError:
        raw = b""
    if len(raw) >= 4 and struct.unpack_from("<I", raw)[0] == _ACL_VERSION:
        return [struct.unpack_from("<HHI", raw, off) for off in range(4, len(raw), 8)]
    mode = path.stat().st_mode
    return [(_USER_OBJ, (mode >> 6) & 7, _UNDEFINED_ID), (_GROUP_OBJ, (mode >> 3) & 7, _UNDEFINED_ID),
            (_OTHER, mode & 7, _UNDEFINED_ID)]


def grant_traverse(path: Path, uid: int) -> None:
    """Add `u:<uid>:--x` to the directory's ACL (what `setfacl -m u:USER:x DIR` does), nothing more."""
    entries = [e for e in _read_acl(path) if e[0] != _MASK]
    users = {e[2]: e for e in entries if e[0] == _USER}
    perm = (users[uid][1] if uid in users else 0) | 1
    entries = [e for e in entries if not (e[0] == _USER and e[2] == uid)] + [(_USER, perm, uid)]
    group_class = 0
    for tag, p, _ in entries:
        if tag in (_USER, _GROUP_OBJ, _GROUP):
            group_class |= p
    entries.append((_MASK, group_class, _UNDEFINED_ID))
    entries.sort(key=lambda e: (e[0], e[2]))
    os.setxattr(path, "system.posix_acl_access",
                struct.pack("<I", _ACL_VERSION) + b"".join(struct.pack("<HHI", *e) for e in entries))


def runtime_paths(shared_dir: Path) -> list[Path]:
    """What ranks running as the node user must reach: the interpreter (resolved: a venv's python is
    a symlink, often into a pyenv under /root), the venv, the dscluster package, the shared dir."""
    import dscluster

    return [Path(sys.executable).resolve(), Path(sys.prefix), Path(sys.base_prefix),
            Path(dscluster.__file__).resolve().parent, Path(shared_dir)]


def ensure_shared(user: str, shared: Path) -> tuple[pwd.struct_passwd, list[Path]]:
    """The node user (made if missing) owning the shared dir (made if missing): the ranks run as that user
    and write runs/ and data/ there. Returns its passwd entry and what `ensure_access` granted."""
    entry = ensure_user(user)
    shared.mkdir(parents=True, exist_ok=True)
    st = shared.stat()
    # As sharedlayout made it before (root's, the node user's group, sticky): kept, never the node user's again,
    # even for a moment (it could rename runs/ then). Else the node user's, which sharedlayout then makes right.
    if (st.st_uid, st.st_gid, st.st_mode & 0o7777) != (0, entry.pw_gid, 0o1775):
        os.chown(shared, entry.pw_uid, entry.pw_gid)
        os.chmod(shared, 0o755)
    return entry, ensure_access(entry, shared)


def ensure_access(entry: pwd.struct_passwd, shared_dir: Path, *, grant: bool = True) -> list[Path]:
    """Make sure the node user can run this Python and reach the shared dir. Root-owned directories
    in the way get a narrow traverse-only ACL entry for that one user (returned, so the caller can say
    so); anything else fails with the fix."""
    granted: list[Path] = []
    for target in runtime_paths(shared_dir):
        for _ in range(64):
            blocker = blocking_dir(target, entry)
            if blocker is None:
                break
            if not grant or blocker.stat().st_uid != 0:
                raise PermissionNeeded(
                    tr("the node user {user} cannot reach {target}: {dir} is not traversable for it (mode {mode})",
                       user=entry.pw_name, target=target, dir=blocker, mode=oct(blocker.stat().st_mode & 0o777)),
                    tr("let it traverse (not read) that directory: setfacl -m u:{user}:x {dir}, or put the venv "
                       "and the shared dir elsewhere (--shared DIR)", user=entry.pw_name, dir=blocker))
            try:
                grant_traverse(blocker, entry.pw_uid)
            except OSError as err:
                raise PermissionNeeded(
                    tr("cannot grant {user} traverse access to {dir}: {err}", user=entry.pw_name, dir=blocker, err=err),
                    tr("chmod o+x {dir}, or move the venv out of it", dir=blocker)) from None
            granted.append(blocker)
    return granted


def revoke_traverse(uid: int, shared_dirs: list[Path]) -> None:
    """Take back what `ensure_access` granted a person who is removed: their ACL entries on the
    directories on the way to this Python and to `shared_dirs`."""
    seen: set[Path] = set()
    for shared in shared_dirs:
        for target in runtime_paths(shared):
            for directory in Path(target).resolve().parents:
                if directory in seen:
                    continue
                seen.add(directory)
                try:
                    entries = _read_acl(directory)
                except OSError:
                    continue
                if not any(tag == _USER and ident == uid for tag, _, ident in entries):
                    continue
                kept = [e for e in entries if not (e[0] == _USER and e[2] == uid) and e[0] != _MASK]
                group_class = 0
                for tag, p, _ in kept:
                    if tag in (_USER, _GROUP_OBJ, _GROUP):
                        group_class |= p
                if any(tag in (_USER, _GROUP) for tag, _, _ in kept):  # still an extended ACL: it keeps a mask
                    kept.append((_MASK, group_class, _UNDEFINED_ID))
                kept.sort(key=lambda e: (e[0], e[2]))
                # A minimal ACL (owner, group, other) is the mode bits again: the kernel sets them from it.
                os.setxattr(directory, "system.posix_acl_access",
                            struct.pack("<I", _ACL_VERSION) + b"".join(struct.pack("<HHI", *e) for e in kept))
