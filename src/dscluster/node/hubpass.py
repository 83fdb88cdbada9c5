"""The hub's passwords: one per person, made by `dscluster user add` (or `user password`), shown once.

Why not PAM: the cluster's accounts have no password (`*`: key-only ssh), and giving them one would
open ssh and su to it too. The hub's password is the hub's alone: a random one, printed once to the
administrator who made it, stored only as a salted scrypt hash in a 0600 file of the hub's 0700 state
directory (root's), read by the hub's authenticator at each login (node/hubauth.py). The person changes
nothing on the nodes by knowing it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from dscluster import paths
from dscluster.fsutil import atomic_write_json

# scrypt's interactive-login cost (RFC 7914 suggests N=2**14 for that); 16 MiB of memory per check.
_N, _R, _P = 2**14, 8, 1


def hub_home() -> Path:
    """The hub's directory: `private/` (0700) holds its secrets and database; the rest is readable config.
    DSCLUSTER_HUB_HOME moves it (the master's container keeps it in its state volume, which `down`/`up` keep)."""
    return Path(os.environ.get("DSCLUSTER_HUB_HOME") or paths.home() / "hub")


def private_dir() -> Path:
    return hub_home() / "private"


def password_file() -> Path:
    return private_dir() / "passwords.json"


def new_password() -> str:
    return secrets.token_urlsafe(12)


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${digest.hex()}"


def verify(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        got = hashlib.scrypt(password.encode("utf-8"), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(digest) // 2)
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(got.hex(), digest)


def load(path: Path | None = None) -> dict[str, str]:
    try:
        data = json.loads((path or password_file()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _ensure_private() -> Path:
    for d, mode in ((hub_home(), 0o711), (private_dir(), 0o700)):
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, mode)
    return private_dir()


def set_password(name: str, password: str) -> None:
    _ensure_private()
    stored = load()
    stored[name] = hash_password(password)
    atomic_write_json(password_file(), stored, mode=0o600)


def key_file() -> Path:
    """Each person's SSH public key file as `user add --key` was given it, for `hub url`'s tunnel line."""
    return private_dir() / "keys.json"


def record_key(name: str, pubkey: str | os.PathLike) -> None:
    _ensure_private()
    keys = load(key_file())
    keys[name] = str(Path(pubkey).resolve())
    atomic_write_json(key_file(), keys, mode=0o600)


def private_key_of(name: str) -> str | None:
    """The private half of the key `user add --key` was given (alice.pub -> alice), or None."""
    pub = load(key_file()).get(name)
    return pub.removesuffix(".pub") if pub else None


def remove_password(name: str) -> bool:
    keys = load(key_file())
    if keys.pop(name, None) is not None:
        atomic_write_json(key_file(), keys, mode=0o600)
    stored = load()
    if name not in stored:
        return False
    del stored[name]
    atomic_write_json(password_file(), stored, mode=0o600)
    return True


def check(name: str, password: str, path: Path | None = None) -> bool:
    stored = load(path).get(name)
    return bool(stored) and verify(password, stored)


def main(argv: list[str] | None = None) -> int:
    """`python -m dscluster.node.hubpass set NAME` (the password on stdin, never argv) or `remove NAME`: what
    `dscluster user add` runs as root in the master's container."""
    import sys  # noqa: PLC0415

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("set", "remove"):
        print("usage: python -m dscluster.node.hubpass set|remove NAME (set: the password on stdin)", file=sys.stderr)
        return 2
    if args[0] == "set":
        password = sys.stdin.readline().strip()
        if not password:
            print("no password on stdin", file=sys.stderr)
            return 2
        set_password(args[1], password)
    else:
        remove_password(args[1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
