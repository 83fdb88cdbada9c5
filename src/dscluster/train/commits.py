"""The committed-step rules of dscluster's checkpoint protocol (see train/checkpoint.py), without torch:
the `step-N` layout, COMMIT.json (reading it, what is wrong with it, the content hashes and `verify`),
which steps are committed, the commit itself, setting an uncommitted leftover aside, and retention.

The supervisor, `status`, `ckpt`, the panel and the disk-space checks read checkpoints through here;
they never import torch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from dscluster.errors import DsclusterError
from dscluster.fsutil import atomic_write_json, atomic_write_text, fsync_dir, read_bytes
from dscluster.i18n import tr

COMMIT_FILE = "COMMIT.json"
LATEST_FILE = "latest"
# Set by the supervisor for every attempt: where the run's checkpoints are, and (when that directory
# already holds a committed step) the step a restart is expected to resume from.
CHECKPOINT_DIR_ENV = "DSCLUSTER_CHECKPOINT_DIR"
RESUME_STEP_ENV = "DSCLUSTER_RESUME_STEP"
# Where a rank 0 that resumed (or found nothing to resume) says so, one file per attempt, so that
# `status` can tell a restarted script that resumed from one that started from scratch.
RESUMES_DIR = "resumes"
HASH_NAME = "sha256-tree-64MiB"
_PIECE = 64 << 20
_TAG_RE = re.compile(r"^step-(\d+)$")


class CheckpointError(DsclusterError):
    """A save did not produce the files a commit needs, or a resume target is not usable."""


def tag_for(step: int) -> str:
    return f"step-{step}"


def step_of(tag: str) -> int | None:
    m = _TAG_RE.match(tag)
    return int(m.group(1)) if m else None


def committed_steps(save_dir: str | Path) -> list[int]:
    """Steps whose directory holds a readable COMMIT.json (a JSON object), ascending. A COMMIT.json that is
    empty, truncated or not JSON (a disk fault, a full disk) does not commit its step: resume, restart and
    export skip it, and the next save of that step sets it aside. One with the wrong types inside (a hand
    edit) commits it, damaged: every reader names the problem (`damage`)."""
    save_dir = Path(save_dir)
    steps = []
    try:
        entries = list(os.scandir(save_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in entries:
        step = step_of(entry.name)
        if step is not None and entry.is_dir() and (Path(entry.path) / COMMIT_FILE).is_file() \
                and load_commit(Path(entry.path))[0] is not None:
            steps.append(step)
    return sorted(steps)


@dataclass(frozen=True)
class StepDir:
    """One `step-N` directory of a save dir, as every reader shows it (`dscluster ckpt`, the panel)."""

    step: int
    path: Path
    committed: bool  # COMMIT.json is there (the checkpoint protocol's last write)

    @property
    def tag(self) -> str:
        return self.path.name


def step_dirs(save_dir: str | Path) -> list[StepDir]:
    """Every `step-N` directory of a save dir, committed or not, ascending (symlinks are not steps)."""
    save_dir = Path(save_dir)
    try:
        entries = list(os.scandir(save_dir))
    except OSError:
        return []
    out = []
    for entry in entries:
        step = step_of(entry.name)
        if step is not None and entry.is_dir(follow_symlinks=False):
            path = Path(entry.path)
            out.append(StepDir(step, path, (path / COMMIT_FILE).is_file()))
    return sorted(out, key=lambda s: s.step)


def latest_tag(save_dir: str | Path) -> str | None:
    """The tag `latest` names (DeepSpeed's pointer, replaced atomically after a commit), or None."""
    try:
        return read_bytes(Path(save_dir) / LATEST_FILE)[:4096].decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def load_commit(step_dir: Path) -> tuple[dict | None, str | None]:
    """(COMMIT.json's object, what is wrong with it or None). The object is None when the file is missing,
    empty or not a JSON object: the step is not committed. Every reader of a commit goes through here, so a
    truncated, bit-flipped, empty or hand-edited file is one message, never an exception deep in a reader."""

    try:
        # read_bytes: the supervisor (launching user) reads this in the node user's directory; no symlinks.
        raw = read_bytes(step_dir / COMMIT_FILE)
    except FileNotFoundError:
        return None, tr("{file} is missing", file=COMMIT_FILE)
    except OSError as exc:
        return None, tr("{file} is unreadable ({err})", file=COMMIT_FILE, err=exc.strerror or exc)
    if not raw.strip():
        return None, tr("{file} is unreadable (empty)", file=COMMIT_FILE)
    try:
        commit = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):  # JSONDecodeError is a ValueError
        return None, tr("{file} is unreadable (truncated or not JSON)", file=COMMIT_FILE)
    if not isinstance(commit, dict):
        return None, tr("{file} is unreadable (not a JSON object)", file=COMMIT_FILE)
    return commit, _shape_problem(commit)


def _shape_problem(commit: dict) -> str | None:
    """What in a COMMIT.json object is not of the types `commit` writes, or None."""
    files = commit.get("files", {})  # absent: `damage` and `verify` say so; the other readers need no list
    if not isinstance(files, dict) or not all(isinstance(k, str) and k and isinstance(v, int)
                                              and not isinstance(v, bool) and v >= 0 for k, v in files.items()):
        return tr("{file} is unreadable (its \"files\" is not a map of file name to size)", file=COMMIT_FILE)
    if any(k.startswith("/") or ".." in k.split("/") or "\0" in k for k in files):
        # `commit` records names inside the step: one that leads out of it is not of its writing.
        return tr("{file} is unreadable (its \"files\" is not a map of file name to size)", file=COMMIT_FILE)
    sha = commit.get("sha256")
    if sha is not None and not (isinstance(sha, dict) and all(isinstance(v, str) for v in sha.values())):
        return tr("{file} is unreadable (its \"sha256\" is not a map of file name to hash)", file=COMMIT_FILE)
    for key in ("world_size", "zero_stage", "step"):
        value = commit.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            return tr("{file} is unreadable (its \"{key}\" is {value}, not a number)", file=COMMIT_FILE,
                      key=key, value=repr(value)[:40])
    return None


def read_commit(step_dir: Path) -> dict | None:
    """A step's COMMIT.json (what the commit recorded: files and sizes, world size, ZeRO stage), or None
    when it is missing, unreadable or not of the types `commit` writes (`commit_problem` says which)."""
    commit, problem = load_commit(step_dir)
    return commit if problem is None else None


def commit_problem(step_dir: Path) -> str | None:
    """None when the step's COMMIT.json is there and of the shape `commit` writes, else what is wrong."""
    return load_commit(step_dir)[1]


def not_committed_error(step_dir: Path, problem: str, run: str = "RUN") -> CheckpointError:
    """The refusal of every command asked for a step whose COMMIT.json is missing or unreadable."""
    older = [s for s in committed_steps(step_dir.parent) if s < (step_of(step_dir.name) or 0)]
    fix = tr("it is not a usable checkpoint (the save or the disk failed before its commit): use a committed step "
             "(dscluster ckpt {run} lists them{older}); a restart resumes from the newest committed one",
             run=run, older=tr("; the newest before it is step-{n}", n=older[-1]) if older else "")
    return CheckpointError(tr("{tag} is not committed: {problem} ({path})", tag=step_dir.name, problem=problem,
                              path=step_dir / COMMIT_FILE), fix, setting="--step")


def damage(step_dir: Path) -> str | None:
    """None when a committed step's files are all there at the sizes COMMIT.json recorded, else what is
    wrong. Committed steps are never rewritten, so any difference means a disk fault or a hand edit."""
    commit, problem = load_commit(step_dir)
    if problem is not None or "files" not in commit:
        return problem or tr("{file} lists no file", file=COMMIT_FILE)
    for name, size in commit["files"].items():
        try:
            actual = (step_dir / name).stat().st_size
        except OSError:
            return tr("{name} is missing", name=name)
        if actual != size:
            return tr("{name} is {actual:,} bytes, {size:,} when committed", name=name, actual=actual, size=size)
    return None


def file_digest(path: Path) -> str:
    """SHA-256 of the SHA-256s of the file's 64 MiB pieces: pieces hash in parallel (hashlib releases
    the GIL), so one large shard is not bound to one core."""
    import hashlib  # noqa: PLC0415
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    size = path.stat().st_size
    offsets = range(0, max(size, 1), _PIECE)

    def piece(offset: int) -> bytes:
        with open(path, "rb", buffering=0) as f:
            f.seek(offset)
            h, left = hashlib.sha256(), min(_PIECE, size - offset)
            while left > 0:
                chunk = f.read(min(left, 8 << 20))
                if not chunk:
                    break
                h.update(chunk)
                left -= len(chunk)
            return h.digest()

    if len(offsets) == 1:
        return hashlib.sha256(piece(0)).hexdigest()
    with ThreadPoolExecutor(max_workers=min(len(offsets), hash_threads())) as pool:
        return hashlib.sha256(b"".join(pool.map(piece, offsets))).hexdigest()


def hash_threads() -> int:
    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def digests(step_dir: Path, names: list[str]) -> dict[str, str]:
    """Content hashes of the named files of a step, several files at a time."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with ThreadPoolExecutor(max_workers=hash_threads()) as pool:
        return dict(zip(names, pool.map(lambda n: file_digest(step_dir / n), names)))


def verify(step_dir: Path, names: list[str] | None = None) -> list[str]:
    """What is wrong with a committed step: every file (or the named ones) against the size and content
    hash COMMIT.json recorded. Empty when intact. Files added later (step-N/universal, a conversion) are
    not part of the commit and not checked. A step committed before hashes were recorded is checked by
    size only."""
    commit, problem = load_commit(step_dir)
    if problem is not None or "files" not in commit:
        return [problem or tr("{file} lists no file", file=COMMIT_FILE)]
    files = commit["files"]
    recorded = commit.get("sha256") or {}
    problems, to_hash = [], []
    for name in names if names is not None else sorted(files):
        try:
            actual = (step_dir / name).stat().st_size
        except OSError:
            problems.append(tr("{name} is missing", name=name))
            continue
        if actual != files.get(name):
            problems.append(tr("{name} is {actual:,} bytes, {size:,} when committed", name=name, actual=actual,
                               size=files[name]))
        elif name in recorded:
            to_hash.append(name)
    for name, digest in digests(step_dir, to_hash).items():
        if digest != recorded[name]:
            problems.append(tr("{name} has other contents than when committed (content hash differs)", name=name))
    return problems


def latest_committed(save_dir: str | Path) -> int | None:
    steps = committed_steps(save_dir)
    return steps[-1] if steps else None


def expected_files_present(step_dir: Path, zero_stage: int, world_size: int) -> str | None:
    """None when the save looks complete, else what is missing (checked by rank 0 before commit)."""
    names = [p.name for p in step_dir.iterdir()] if step_dir.is_dir() else []
    if not any(n.endswith("model_states.pt") for n in names):
        return tr("no *model_states.pt file")
    if zero_stage > 0:
        shards = [n for n in names if n.endswith("optim_states.pt")]
        if len(shards) != world_size:
            return tr("{n} optimizer shards, expected {w}", n=len(shards), w=world_size)
    return None


def fsync_tree(path: Path) -> None:
    for root, _dirs, files in os.walk(path):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(root)


def set_aside_uncommitted(save_dir: Path, step: int) -> Path | None:
    """Rename a leftover uncommitted step-N (a crashed save) out of the way; returns its new path."""
    step_dir = save_dir / tag_for(step)
    if not step_dir.exists():
        return None
    if (step_dir / COMMIT_FILE).exists() and load_commit(step_dir)[0] is not None:
        raise CheckpointError(tr("{path} is already committed; refusing to overwrite it", path=step_dir),
                              tr("pass a new --save-dir, or --resume auto to continue from it"), setting="--save-dir")
    n = 1
    while (aside := save_dir / f"{tag_for(step)}.incomplete-{n}").exists():
        n += 1
    os.replace(step_dir, aside)
    fsync_dir(save_dir)
    return aside


def commit(save_dir: Path, step: int, info: dict) -> None:
    """Rank 0, after every rank finished writing step-N: fsync, COMMIT.json, then `latest`."""
    step_dir = save_dir / tag_for(step)
    fsync_tree(step_dir)
    files = {p.relative_to(step_dir).as_posix(): p.stat().st_size for p in sorted(step_dir.rglob("*")) if p.is_file()}
    atomic_write_json(step_dir / COMMIT_FILE, {"step": step, "tag": tag_for(step), "time": time.time(),
                                               "files": files, "hash": HASH_NAME,
                                               "sha256": digests(step_dir, list(files)), **info})
    atomic_write_text(save_dir / LATEST_FILE, tag_for(step))


def apply_retention(save_dir: Path, keep: int) -> list[int]:
    """Delete committed steps beyond the newest `keep` (0 = keep all); returns the deleted steps."""
    if keep <= 0:
        return []
    steps = committed_steps(save_dir)
    doomed = steps[:-keep] if len(steps) > keep else []
    for step in doomed:
        step_dir = save_dir / tag_for(step)
        os.unlink(step_dir / COMMIT_FILE)  # uncommit first: a crash below leaves an unloadable leftover only
        fsync_dir(step_dir)
        shutil.rmtree(step_dir, ignore_errors=True)
    if doomed:
        fsync_dir(save_dir)
    return doomed
