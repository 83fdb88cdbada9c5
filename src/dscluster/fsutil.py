"""Atomic state writes: temp file in the same directory + fsync + os.replace.

A reader never sees a half-written file, and a crash mid-write leaves the previous version intact.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any


def fsync_dir(path: str | os.PathLike) -> None:
    """Make a rename or a new entry in `path` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: str | os.PathLike, text: str, mode: int = 0o644) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)


def atomic_write_json(path: str | os.PathLike, obj: Any, mode: int = 0o644) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", mode)


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one JSON line with a single write() so concurrent appenders never interleave lines."""
    line = (json.dumps(record, default=str, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_jsonl(path: str | os.PathLike, offset: int = 0) -> tuple[list[dict], int]:
    """Read complete JSON lines from byte `offset`; returns (records, next_offset).

    A trailing partial line (a writer mid-append) is left for the next call, so a half-written
    file never breaks a reader.
    """
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
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


# A spec, hostfile or ds_config is a few KB; anything far larger is the wrong file (or /dev/zero, which a
# plain read would follow until memory runs out).
USER_FILE_MAX_BYTES = 4 * 2**20
UTF8_BOM = b"\xef\xbb\xbf"
# Like git and grep: a NUL byte in the first 8 KiB makes a file binary (no text editor writes one).
_BINARY_PROBE = 8192


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_PROBE]


def decode_user_text(data: bytes, path: str | os.PathLike, setting: str) -> str:
    """The one text policy for every file a user wrote or handed us (spec, hostfile, ds_config, the
    text files of `data prepare`): UTF-8, with a leading byte-order mark dropped (Windows editors
    write one; DeepSpeed's hjson and Python's tomllib would otherwise read it as part of the first
    name). A binary file or bytes that are not UTF-8 are a ConfigError naming the file, the byte and
    the conversion command; nothing is guessed, so what runs is what the user wrote."""
    from dscluster.errors import ConfigError  # noqa: PLC0415
    from dscluster.i18n import tr  # noqa: PLC0415

    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # Notepad's "Unicode": NUL bytes, but text
        raise ConfigError(tr("{path} is UTF-16 text, not UTF-8", path=path),
                          tr("save it as UTF-8, e.g. iconv -f UTF-16 -t UTF-8 {path} -o fixed && mv fixed {path}",
                             path=shlex.quote(str(path))), setting=setting)
    if is_binary(data):
        raise ConfigError(tr("{path} is a binary file (a NUL byte at {pos}), not text", path=path,
                             pos=data.index(b"\0")), tr("check the path: give a UTF-8 text file"), setting=setting)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(tr("{path} is not UTF-8 text (byte {pos}: {byte})", path=path, pos=err.start,
                             byte=err.object[err.start:err.start + 1].hex()),
                          tr("save it as UTF-8, e.g. iconv -f LATIN1 -t UTF-8 {path} -o fixed && mv fixed {path}",
                             path=shlex.quote(str(path))), setting=setting) from None


def read_user_text(path: Path, setting: str) -> str:
    """A file the user wrote (spec, hostfile, ds_config) as text under `decode_user_text`'s policy: a
    regular file of at most USER_FILE_MAX_BYTES. Anything else is a ConfigError naming the file; other
    OSErrors (missing, unreadable) are the caller's to word."""
    import stat  # noqa: PLC0415

    from dscluster.errors import ConfigError  # noqa: PLC0415
    from dscluster.i18n import tr  # noqa: PLC0415

    path = Path(path)
    # stat before open: opening a FIFO would block until someone writes to it.
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise ConfigError(tr("{path} is a directory, not a file", path=path),
                          tr("give the path of the file inside it (a spec, hostfile or ds_config)"), setting=setting)
    if not stat.S_ISREG(mode):
        raise ConfigError(tr("{path} is not a regular file", path=path),
                          tr("give the path of a text file (a spec, hostfile or ds_config)"), setting=setting)
    with open(path, "rb") as f:
        data = f.read(USER_FILE_MAX_BYTES + 1)
    if len(data) > USER_FILE_MAX_BYTES:
        raise ConfigError(tr("{path} is larger than {mb} MiB: not a spec, hostfile or ds_config", path=path,
                             mb=USER_FILE_MAX_BYTES // 2**20), tr("check the path"), setting=setting)
    return decode_user_text(data, path, setting)
