"""Read a prepared data directory: memory-mapped token shards, nothing loaded into RAM up front."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dscluster.data.prepare import FORMAT
from dscluster.errors import DataError
from dscluster.i18n import tr


@dataclass
class Split:
    name: str
    shards: list[np.ndarray]  # read-only memmaps

    @property
    def tokens(self) -> int:
        return sum(len(s) for s in self.shards)


@dataclass
class Dataset:
    path: Path
    meta: dict
    train: Split
    val: Split

    @property
    def vocab_size(self) -> int:
        return int(self.meta["vocab_size"])


def _prepare_hint() -> str:
    return tr("prepare it first: dscluster data prepare SRC... --out DIR (or omit --data for the stdlib corpus)")


def read_meta(path: str | Path) -> dict:
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise DataError(tr("{path} is a file, not a prepared data directory", path=path), _prepare_hint(),
                        setting="--data")
    if not path.is_dir():
        raise DataError(tr("data directory {path} does not exist", path=path), _prepare_hint(), setting="--data")
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(tr("{path} is not a prepared data directory (no meta.json)", path=path), _prepare_hint(),
                        setting="--data") from exc
    except PermissionError as exc:
        raise DataError(tr("cannot read {path}/meta.json (permission denied)", path=path),
                        tr("make the data directory readable by the training user"), setting="--data") from exc
    except json.JSONDecodeError as exc:
        raise DataError(tr("{path}/meta.json is not valid JSON", path=path), _prepare_hint(), setting="--data") from exc
    if meta.get("format") != FORMAT:
        raise DataError(tr("{path}/meta.json has format {fmt!r}, expected {want!r}", path=path,
                           fmt=meta.get("format"), want=FORMAT), _prepare_hint(), setting="--data")
    return meta


def open_dataset(path: str | Path, min_tokens: int = 2) -> Dataset:
    """Open every shard as a read-only memmap, checking sizes against meta.json."""
    path = Path(path)
    meta = read_meta(path)
    dtype = np.dtype(meta["dtype"]).newbyteorder("<")
    splits = {}
    for name in ("train", "val"):
        info = meta["splits"].get(name, {"files": [], "tokens": []})
        shards = []
        for fname, count in zip(info["files"], info["tokens"]):
            fpath = path / fname
            try:
                size = fpath.stat().st_size
            except FileNotFoundError as exc:
                raise DataError(tr("shard {file} listed in meta.json is missing", file=fpath), _prepare_hint(),
                                setting="--data") from exc
            if size != count * dtype.itemsize:
                raise DataError(tr("shard {file} has {size} bytes, meta.json says {want}", file=fpath, size=size,
                                   want=count * dtype.itemsize), _prepare_hint(), setting="--data")
            if count:
                shards.append(np.memmap(fpath, dtype=dtype, mode="r"))
        splits[name] = Split(name, shards)
    if splits["train"].tokens < min_tokens:
        raise DataError(tr("{path} has only {n} training tokens; a window needs {need}", path=path,
                           n=splits["train"].tokens, need=min_tokens),
                        tr("add more text, or lower --seq-len"), setting="--data")
    return Dataset(path, meta, splits["train"], splits["val"])
