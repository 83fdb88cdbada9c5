"""`dscluster data prepare`: text files -> memory-mapped token shards + meta.json.

Layout of a prepared directory:
    meta.json               format, dtype, tokenizer, per-split shard files and token counts
    train-00000.bin ...     raw little-endian uint16 (vocab <= 65535) or uint32 tokens
    val-00000.bin ...
Documents are concatenated with the tokenizer's end-of-document id between them. Each document
goes to train or val by a hash of its name (relative to the source root), so the split does not
depend on the order or the machine; when no document hashes into val, the last part of train is
held out instead (tiny inputs still get a validation set).

The directory is written under a temporary name and renamed into place, so a reader never sees a
half-prepared directory and two processes preparing the same cache cannot corrupt each other.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dscluster.data.tokenizer import ByteTokenizer, Tokenizer
from dscluster.errors import ConfigError, DataError
from dscluster.fsutil import atomic_write_json, fsync_dir
from dscluster.i18n import tr, tr_n
from dscluster.usertext import decode_user_text, is_binary

FORMAT = "dscluster-tokens/1"
TEXT_SUFFIXES = (".txt", ".md", ".py", ".rst")
JSONL_SUFFIXES = (".jsonl",)
SHARD_TOKENS = 1 << 28  # 512 MiB of uint16 per shard file


@dataclass(frozen=True)
class Document:
    name: str  # stable name used for the train/val split, e.g. "json/decoder.py" or "a.jsonl:12"
    text: str


def is_val(name: str, val_fraction: float) -> bool:
    digest = hashlib.sha1(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < val_fraction


def _files_under(src: Path) -> list[tuple[Path, str]]:
    """(path, stable name) of every supported file under `src`, in sorted order."""
    if src.is_file():
        return [(src, src.name)]
    found = []
    for path in sorted(src.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES + JSONL_SUFFIXES:
            found.append((path, path.relative_to(src).as_posix()))
    return found


@dataclass
class SourceTally:
    """Files `iter_documents` did not turn into documents: binary ones are skipped (a NUL byte: an image,
    an archive, a compiled file with a text suffix), text that is not UTF-8 is collected and refused
    at the end, all of it at once; see usertext.decode_user_text, the one policy for a user's text."""

    binary: list[str] = field(default_factory=list)
    not_utf8: list[str] = field(default_factory=list)

    def check(self) -> None:
        if self.not_utf8:
            shown = ", ".join(self.not_utf8[:3]) + (", ..." if len(self.not_utf8) > 3 else "")
            first = shlex.quote(self.not_utf8[0])
            raise DataError(tr_n(len(self.not_utf8), "{n} source file is not UTF-8 text: {files}",
                                 "{n} source files are not UTF-8 text: {files}", files=shown),
                            tr("convert them to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8 {path} -o fixed && mv fixed "
                               "{path}), or move them out of the sources; nothing was written", path=first),
                            setting="SRC")


def _decode(raw: bytes, path: Path, tally: SourceTally | None) -> str | None:
    """A source file's text, or None when it is skipped (binary) or collected (not UTF-8) in `tally`."""
    if is_binary(raw) and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        if tally is None:
            decode_user_text(raw, path, "SRC")  # raises, naming the file
        tally.binary.append(str(path))
        return None
    try:
        return decode_user_text(raw, path, "SRC")
    except ConfigError:
        if tally is None:
            raise
        tally.not_utf8.append(str(path))
        return None


def iter_documents(sources: Iterable[tuple[Path, str]], text_field: str = "text",
                   tally: SourceTally | None = None) -> Iterator[Document]:
    """Documents of the files in order. Without a `tally`, the first binary or non-UTF-8 file raises."""
    for path, name in sources:
        text = _decode(path.read_bytes(), path, tally)
        if text is None:
            continue
        if path.suffix in JSONL_SUFFIXES:
            for lineno, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(tr("{path}:{line}: not valid JSON ({err})", path=path, line=lineno, err=exc.msg),
                                    tr("fix or remove that line; each line must be a JSON object"), setting="SRC") from exc
                text = record.get(text_field) if isinstance(record, dict) else None
                if not isinstance(text, str):
                    raise DataError(tr("{path}:{line}: no string field {field!r}", path=path, line=lineno, field=text_field),
                                    tr("pass --text-field NAME naming the field that holds the text"), setting="--text-field")
                yield Document(f"{name}:{lineno}", text)
        else:
            yield Document(name, text)


class _ShardWriter:
    def __init__(self, out: Path, split: str, dtype: np.dtype, shard_tokens: int):
        self.out, self.split, self.dtype, self.shard_tokens = out, split, dtype, shard_tokens
        self.files: list[str] = []
        self.counts: list[int] = []
        self.documents = 0
        self._f = None

    def write(self, tokens: np.ndarray) -> None:
        tokens = tokens.astype(self.dtype, copy=False)
        while len(tokens):
            if self._f is None or self.counts[-1] >= self.shard_tokens:
                self._open_next()
            room = self.shard_tokens - self.counts[-1]
            chunk, tokens = tokens[:room], tokens[room:]
            self._f.write(chunk.astype(self.dtype.newbyteorder("<"), copy=False).tobytes())
            self.counts[-1] += len(chunk)

    def _open_next(self) -> None:
        self.close()
        name = f"{self.split}-{len(self.files):05d}.bin"
        self.files.append(name)
        self.counts.append(0)
        self._f = open(self.out / name, "wb")

    def close(self) -> None:
        if self._f is not None:
            self._f.flush()
            os.fsync(self._f.fileno())
            self._f.close()
            self._f = None

    def summary(self) -> dict:
        return {"files": self.files, "tokens": self.counts, "documents": self.documents}


def _encode(tok: Tokenizer, text: str) -> np.ndarray:
    if isinstance(tok, ByteTokenizer):  # fast path: no Python list of ints
        return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    return np.asarray(tok.encode(text), dtype=np.int64)


_PREPARED_FILE = re.compile(r"^(meta\.json|(train|val)-\d{5}\.bin)$")


def _check_out(out: Path, force: bool) -> None:
    """--out is replaced as a whole, so it may only ever hold prepared data: never a user's file or folder."""
    if out.exists() and not out.is_dir():
        raise DataError(tr("--out {out} is a file, not a directory; preparing there would replace it", out=out),
                        tr("choose a new directory for --out, e.g. --out data/mine"), setting="--out")
    if not out.is_dir():
        return
    try:
        foreign = sorted(p.name for p in out.iterdir() if not _PREPARED_FILE.match(p.name))
    except OSError as exc:
        raise DataError(tr("cannot write {out}: {err}", out=out, err=exc.strerror),
                        tr("choose a writable --out directory"), setting="--out") from exc
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise DataError(tr("--out {out} already holds other files ({files}); preparing there would delete them",
                           out=out, files=shown),
                        tr("choose a new or empty directory for --out, e.g. --out data/mine"), setting="--out")
    if (out / "meta.json").exists() and not force:
        raise DataError(tr("{out} already holds prepared data", out=out),
                        tr("pass --force to replace it, or choose another --out"), setting="--out")


def _source_files(sources: list[str | Path], file_filter=None) -> list[tuple[Path, str]]:
    """Every text file under `sources` (files or directories), with its name; refused when none is."""
    files: list[tuple[Path, str]] = []
    for src in sources:
        src = Path(src)
        if not src.exists():
            raise DataError(tr("source {src} does not exist", src=src), tr("pass existing files or directories"), setting="SRC")
        found = _files_under(src)
        files += [f for f in found if file_filter is None or file_filter(f[1])]
    if not files:
        raise DataError(tr("no .txt/.md/.py/.rst/.jsonl files found in {srcs}", srcs=", ".join(map(str, sources))),
                        tr("point SRC at text files or directories that contain them"), setting="SRC")
    return files


def _partial_dir(out: Path) -> Path:
    """An empty directory beside `out` that the dataset is written into before it takes `out`'s place."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
    except OSError as exc:
        raise DataError(tr("cannot write {out}: {err}", out=out, err=exc.strerror),
                        tr("choose a writable --out directory"), setting="--out") from exc
    return tmp


def _put_in_place(tmp: Path, out: Path) -> None:
    """The finished dataset replaces `out` by renames (an old one set aside first, then removed)."""
    if out.exists():
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)
    fsync_dir(out.parent)


def prepare(sources: list[str | Path], out: str | Path, tokenizer: Tokenizer, *, val_fraction: float = 0.05,
            text_field: str = "text", force: bool = False, shard_tokens: int = SHARD_TOKENS,
            extra_meta: dict | None = None, file_filter=None) -> dict:
    """Tokenize `sources` (files or directories) into `out`; returns the meta dict written."""
    out = Path(out)
    if not sources:
        raise DataError(tr("no source files given"), tr("dscluster data prepare SRC... --out DIR"), setting="SRC")
    if not 0.0 <= val_fraction < 1.0:
        raise DataError(tr("--val-fraction must be in [0, 1), got {v}", v=val_fraction), tr("e.g. --val-fraction 0.05"),
                        setting="--val-fraction")
    _check_out(out, force)
    files = _source_files(sources, file_filter)
    dtype = np.dtype(np.uint16 if tokenizer.vocab_size <= 65535 else np.uint32)
    tmp = _partial_dir(out)
    writers = {split: _ShardWriter(tmp, split, dtype, shard_tokens) for split in ("train", "val")}
    eos = np.asarray([tokenizer.eos_id])
    total_bytes = 0
    tally = SourceTally()
    try:
        for doc in iter_documents(files, text_field, tally):
            ids = _encode(tokenizer, doc.text)
            if not len(ids):
                continue
            total_bytes += len(doc.text)
            w = writers["val" if is_val(doc.name, val_fraction) else "train"]
            w.write(ids)
            w.write(eos)
            w.documents += 1
        for w in writers.values():
            w.close()
        tally.check()
        if val_fraction > 0 and not writers["val"].files and writers["train"].files:
            _hold_out_tail(tmp, writers, val_fraction, dtype)
        if not any(w.documents for w in writers.values()):
            raise DataError(tr("no text found in the sources: every file was empty or skipped ({n} binary)",
                               n=len(tally.binary)),
                            tr("check the paths and the file types (.txt .md .py .rst .jsonl; --text-field for jsonl)"),
                            setting="sources")
        if not writers["train"].files:
            raise DataError(tr("all documents went to the validation split"),
                            tr("add more source files or lower --val-fraction"), setting="--val-fraction")
        meta = {
            "format": FORMAT, "dtype": dtype.name, "tokenizer": tokenizer.describe(),
            "vocab_size": tokenizer.vocab_size, "eos_id": tokenizer.eos_id, "val_fraction": val_fraction,
            "splits": {s: w.summary() for s, w in writers.items()},
            "sources": {"paths": [str(Path(s).resolve()) for s in sources], "files": len(files), "chars": total_bytes,
                        "skipped_binary": len(tally.binary)},
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **(extra_meta or {}),
        }
        atomic_write_json(tmp / "meta.json", meta)
        _put_in_place(tmp, out)
        return meta
    finally:
        for w in writers.values():
            w.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _hold_out_tail(tmp: Path, writers: dict, val_fraction: float, dtype: np.dtype) -> None:
    """No document hashed into val: move the tail of the last train shard there instead."""
    train = writers["train"]
    last = tmp / train.files[-1]
    tokens = np.fromfile(last, dtype=dtype)
    n_val = max(1, int(sum(train.counts) * val_fraction))
    n_val = min(n_val, len(tokens) // 2)
    if n_val == 0:
        return
    keep, tail = tokens[:-n_val], tokens[-n_val:]
    keep.tofile(last)
    train.counts[-1] = len(keep)
    val = writers["val"]
    val.write(tail)
    val.close()
