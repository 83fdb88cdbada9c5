"""The embedded default corpus: the running Python's own standard-library sources.

Every machine that runs dscluster has them, so the demo needs no download. Files are taken in a
fixed sorted order (tests and bundled third-party code excluded) and the train/val split is a hash
of each file's path relative to the stdlib root, so every machine with the same Python version
prepares identical shards. The prepared shards are cached under <shared>/data/stdlib/.
"""

from __future__ import annotations

import fcntl
import hashlib
import sys
import sysconfig
from pathlib import Path

from dscluster.data.prepare import prepare
from dscluster.data.shards import read_meta
from dscluster.data.tokenizer import ByteTokenizer
from dscluster.errors import DataError
from dscluster.i18n import tr
from dscluster.paths import data_dir, local_shared

EXCLUDED_PARTS = {"site-packages", "dist-packages", "test", "tests", "idlelib", "lib2to3", "turtledemo", "__pycache__"}
CORPUS_NAME = "stdlib"


def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def _keep(relname: str) -> bool:
    parts = relname.split("/")
    return relname.endswith(".py") and not (set(parts[:-1]) & EXCLUDED_PARTS)


def stdlib_files(root: Path | None = None) -> list[Path]:
    root = root or stdlib_root()
    return [p for p in sorted(root.rglob("*.py")) if _keep(p.relative_to(root).as_posix())]


def fingerprint(root: Path | None = None) -> str:
    """Changes when the Python version or any included file changes (name + size)."""
    root = root or stdlib_root()
    h = hashlib.sha1(sys.version.encode())
    for p in stdlib_files(root):
        h.update(f"{p.relative_to(root).as_posix()}:{p.stat().st_size}\n".encode())
    return h.hexdigest()[:16]


def default_corpus_dir(shared: Path | None = None) -> Path:
    return data_dir(shared or local_shared()) / CORPUS_NAME


def ensure_stdlib_corpus(shared: Path | None = None) -> tuple[Path, bool]:
    """Prepare the stdlib corpus unless a matching cache exists; returns (dir, prepared_now)."""
    out = default_corpus_dir(shared)
    root = stdlib_root()
    if not root.is_dir():
        raise DataError(tr("the Python standard library sources are missing at {root}", root=root),
                        tr("install the full Python (not a stripped build), or pass --data DIR"), setting="--data")
    fp = fingerprint(root)
    if _cached(out, fp):
        return out, False
    out.parent.mkdir(parents=True, exist_ok=True)
    # Ranks starting together on one node: one prepares, the others wait and then find the cache.
    with open(out.parent / f".{CORPUS_NAME}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _cached(out, fp):
            return out, False
        prepare([root], out, ByteTokenizer(), force=True, file_filter=_keep,
                extra_meta={"corpus": {"name": CORPUS_NAME, "python": sys.version.split()[0], "fingerprint": fp}})
    return out, True


def _cached(out: Path, fp: str) -> bool:
    try:
        return read_meta(out).get("corpus", {}).get("fingerprint") == fp
    except DataError:
        return False
