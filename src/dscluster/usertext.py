"""The one text policy for every file a user wrote or handed us (a spec, a hostfile, a ds_config, the text
files of `data prepare`): UTF-8 (a byte-order mark dropped), never binary, never huge; anything else is a
ConfigError naming the file, the byte and the conversion command."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

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
