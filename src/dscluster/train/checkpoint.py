"""Checkpoint commit protocol on top of DeepSpeed's (non-atomic) save_checkpoint.

    all ranks  engine.save_checkpoint(save_dir, tag="step-N", save_latest=False)
    barrier
    rank 0     check the expected files exist, fsync them, write step-N/COMMIT.json atomically,
               replace `latest` atomically, apply retention (--keep)
    barrier

A step directory without COMMIT.json is never loaded, so a crash at any moment of a save leaves the
previous committed step as the resume point. Retention deletes only committed steps older than
the newest committed one, removing COMMIT.json first, so a half-deleted step is never loadable.
An uncommitted leftover that a new save needs the name of is renamed aside, never deleted.

COMMIT.json records every file's size and a content hash (SHA-256 over 64 MiB pieces, hashed on a
thread pool right after the write, while the bytes are still in the page cache), so `verify` can tell
a committed step that is intact from one a disk fault or a hand edit changed. The reference trainer and
the public API for user scripts (dscluster.checkpoint) both go through `save` and `resume` here.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from dscluster.errors import ConfigError, DsclusterError, PermissionNeeded
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
                and _load_commit(Path(entry.path))[0] is not None:
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


def _load_commit(step_dir: Path) -> tuple[dict | None, str | None]:
    """(COMMIT.json's object, what is wrong with it or None). The object is None when the file is missing,
    empty or not a JSON object: the step is not committed. Every reader of a commit goes through here, so a
    truncated, bit-flipped, empty or hand-edited file is one message, never an exception deep in a reader."""
    import json  # noqa: PLC0415

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
    commit, problem = _load_commit(step_dir)
    return commit if problem is None else None


def commit_problem(step_dir: Path) -> str | None:
    """None when the step's COMMIT.json is there and of the shape `commit` writes, else what is wrong."""
    return _load_commit(step_dir)[1]


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
    commit, problem = _load_commit(step_dir)
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
    with ThreadPoolExecutor(max_workers=min(len(offsets), _hash_threads())) as pool:
        return hashlib.sha256(b"".join(pool.map(piece, offsets))).hexdigest()


def _hash_threads() -> int:
    return max(1, min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def digests(step_dir: Path, names: list[str]) -> dict[str, str]:
    """Content hashes of the named files of a step, several files at a time."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    with ThreadPoolExecutor(max_workers=_hash_threads()) as pool:
        return dict(zip(names, pool.map(lambda n: file_digest(step_dir / n), names)))


def verify(step_dir: Path, names: list[str] | None = None) -> list[str]:
    """What is wrong with a committed step: every file (or the named ones) against the size and content
    hash COMMIT.json recorded. Empty when intact. Files added later (step-N/universal, a conversion) are
    not part of the commit and not checked. A step committed before hashes were recorded is checked by
    size only."""
    commit, problem = _load_commit(step_dir)
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


def load_problems(step_dir: Path) -> list[str]:
    """Every .pt file of a step opened with torch.load on CPU (memory-mapped: the pickle and the tensor
    table are read, the tensor bytes only mapped); what failed to load. The files are the node user's:
    they are read weights-only (dscluster.trust), so a pickle that would run code is a finding, not a run."""
    from dscluster.trust import load_tensors  # noqa: PLC0415

    problems = []
    for path in sorted(step_dir.glob("*.pt")):
        try:
            load_tensors(path)
        except Exception as exc:  # noqa: BLE001 - any failure to load is the finding
            problems.append(tr("{name} does not load: {err}", name=path.name, err=f"{type(exc).__name__}: {exc}"[:200]))
    return problems


def check_compatible(save_dir: Path, step: int, zero_stage: int, world_size: int) -> None:
    """Refuse to load a committed step that this run's ZeRO layout cannot read: DeepSpeed would fail deep
    in its loader with an AssertionError. Another rank count is fine: `resume` converts the step to
    DeepSpeed's universal format first (see needs_universal)."""
    saved = read_commit(save_dir / tag_for(step)) or {}
    stage = saved.get("zero_stage")
    if stage is not None and stage != zero_stage:
        raise CheckpointError(
            tr("{tag} was saved with ZeRO stage {s}; this run uses stage {n}", tag=tag_for(step), s=stage, n=zero_stage),
            tr("resume with zero_optimization.stage {s}, or start a new --save-dir", s=stage), setting="--resume")


UNIVERSAL_DIR = "universal"


def needs_universal(step_dir: Path, zero_stage: int, world_size: int) -> bool:
    """A step whose ZeRO optimizer state is partitioned over another number of ranks than this run has:
    only DeepSpeed's universal checkpoint format (one file per parameter and state) can be re-partitioned."""
    world = (read_commit(step_dir) or {}).get("world_size")
    return zero_stage > 0 and world is not None and world != world_size


def to_universal(step_dir: Path) -> Path:
    """step-N/universal: the step converted by DeepSpeed's ds_to_universal (once; kept with the step, so
    retention removes both together). Converted under a temporary name, then renamed: a conversion cut
    short is never loaded.

    The converter runs in a fresh interpreter: it forks worker processes, and a fork of a rank (gloo's
    and OpenMP's threads running) can copy a lock held by another thread and wait on it forever, which
    the simulated cluster showed as a conversion stuck at 0% of its first stage."""
    import subprocess  # noqa: PLC0415

    out = step_dir / UNIVERSAL_DIR
    if (out / "mp_rank_00_model_states.pt").is_file():
        return out
    tmp = step_dir / f".{UNIVERSAL_DIR}.partial-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    workers = max(1, min(4, _hash_threads()))
    res = subprocess.run([sys.executable, "-m", "deepspeed.checkpoint.ds_to_universal", "--input_folder", str(step_dir),
                          "--output_folder", str(tmp), "--num_extract_workers", str(workers),
                          "--num_merge_workers", str(max(1, workers // 2)), "--inject_missing_state"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors="replace")
    sys.stdout.write(res.stdout)
    sys.stdout.flush()
    if res.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        tail = " | ".join(res.stdout.strip().splitlines()[-3:])
        raise CheckpointError(tr("converting {tag} to DeepSpeed's universal checkpoint format failed (exit {rc}): "
                                 "{tail}", tag=step_dir.name, rc=res.returncode, tail=tail),
                              tr("check the step with: dscluster ckpt verify RUN --step N; or resume on the world "
                                 "size that saved it"), setting="--resume")
    _fsync_tree(tmp)
    os.replace(tmp, out)
    fsync_dir(step_dir)
    return out


def latest_committed(save_dir: str | Path) -> int | None:
    steps = committed_steps(save_dir)
    return steps[-1] if steps else None


def resume_env(save_dir: str | Path) -> dict[str, str]:
    """The variables the supervisor gives every rank of an attempt: the checkpoint directory and, when it
    holds a committed step, that step (what a script using dscluster.checkpoint.load_latest resumes from)."""
    env = {CHECKPOINT_DIR_ENV: str(save_dir)}
    step = latest_committed(save_dir)
    if step is not None:
        env[RESUME_STEP_ENV] = str(step)
    return env


def step_of_env(env: dict[str, str]) -> int | None:
    value = env.get(RESUME_STEP_ENV, "")
    return int(value) if value.isdigit() else None


def check_writable(save_dir: str | Path) -> None:
    """Create `save_dir` if needed and prove a file can be written there (every rank calls this)."""
    save_dir = Path(save_dir)
    try:
        save_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=save_dir, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise PermissionNeeded(tr("checkpoint directory {path} is not writable ({err})", path=save_dir,
                                  err=exc.strerror or exc),
                               tr("pass a writable --save-dir, or fix its permissions for the training user"),
                               setting="--save-dir") from exc


def resolve_resume(save_dir: str | Path, resume: str) -> int | None:
    """The step to resume from: `auto` (newest committed, or none), `never`, or a tag/step number.

    Refuses combinations that would later overwrite a committed step.
    """
    steps = committed_steps(save_dir)
    if resume == "never":
        if steps:
            raise ConfigError(tr("--resume never, but {path} already holds committed checkpoints (newest step-{n})",
                                 path=save_dir, n=steps[-1]),
                              tr("use --resume auto to continue, or a new --save-dir to start over"), setting="--resume")
        return None
    if resume == "auto":
        if steps and (problem := damage(Path(save_dir) / tag_for(steps[-1]))):
            # Loading it would fail deep inside DeepSpeed (or worse, load garbage); say which and why.
            older = tr("step-{n}", n=steps[-2]) if len(steps) > 1 else tr("the start")
            raise CheckpointError(
                tr("the newest committed checkpoint {path} is damaged: {problem}", path=Path(save_dir) / tag_for(steps[-1]),
                   problem=problem),
                tr("move it aside (mv {path} {path}.damaged) and launch again: training resumes from {older}",
                   path=Path(save_dir) / tag_for(steps[-1]), older=older), setting="--resume")
        return steps[-1] if steps else None
    step = step_of(resume) if not resume.isdigit() else int(resume)
    if step is None:
        raise ConfigError(tr("--resume {v!r} is not auto, never, step-N or N", v=resume),
                          tr("e.g. --resume auto"), setting="--resume")
    if step not in steps and not steps:
        raise ConfigError(tr("--resume {v}: {path} holds no committed checkpoint", v=resume, path=save_dir),
                          tr("use --resume auto (starts fresh when there is none), or the --save-dir of the run to "
                             "continue"), setting="--resume")
    if step not in steps:
        have = ", ".join(tag_for(s) for s in steps) or tr("none")
        raise ConfigError(tr("--resume {v}: {tag} is not a committed checkpoint in {path}", v=resume, tag=tag_for(step),
                             path=save_dir),
                          tr("committed steps: {have}; use one of them or --resume auto", have=have), setting="--resume")
    newer = [s for s in steps if s > step]
    if newer:
        raise ConfigError(tr("resuming from step-{s} would later overwrite the newer committed step-{n}", s=step, n=newer[-1]),
                          tr("resume into a copy, or pass a new --save-dir"), setting="--resume")
    return step


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


def _fsync_tree(path: Path) -> None:
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
    if (step_dir / COMMIT_FILE).exists() and _load_commit(step_dir)[0] is not None:
        raise CheckpointError(tr("{path} is already committed; refusing to overwrite it", path=step_dir),
                              tr("pass a new --save-dir, or --resume auto to continue from it"), setting="--save-dir")
    n = 1
    while (aside := save_dir / f"{tag_for(step)}.incomplete-{n}").exists():
        n += 1
    os.replace(step_dir, aside)
    fsync_dir(save_dir)
    return aside


def batch_info(engine, world_size: int) -> dict:
    """{"batch": {global, micro, accum, world}} of the engine that saves, for COMMIT.json: a resume on
    another world size keeps this global batch (dscluster.batchplan). Empty when the engine does not say."""
    try:
        micro, accum = int(engine.train_micro_batch_size_per_gpu()), int(engine.gradient_accumulation_steps())
    except (AttributeError, TypeError, ValueError):
        return {}
    return {"batch": {"global": micro * accum * world_size, "micro": micro, "accum": accum, "world": world_size}}


def commit(save_dir: Path, step: int, info: dict) -> None:
    """Rank 0, after every rank finished writing step-N: fsync, COMMIT.json, then `latest`."""
    step_dir = save_dir / tag_for(step)
    _fsync_tree(step_dir)
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


# Copy GPU tensors into pinned host memory while saving (torch.save's use_pinned_memory_for_d2h); measured
# the same as pageable copies on an H200, kept switchable for the benchmark's comparison.
PINNED_D2H = True


@contextlib.contextmanager
def fast_torch_save() -> Iterator[None]:
    """torch.save without its CRC32 pass and with pinned-memory GPU->CPU copies, for the saves inside.

    The CRC32 is computed single-threaded over every byte and is what bounds torch.save below the disk's
    speed for a multi-GB optimizer state (benchmarks/RESULTS.md); torch.load never verifies it, so
    leaving it out costs no safety. The commit protocol's fsync + COMMIT.json is what makes a save
    trustworthy. Older torch without these settings saves as before.
    """
    try:
        from torch.utils.serialization import config  # noqa: PLC0415
        saved = (config.save.compute_crc32, config.save.use_pinned_memory_for_d2h)
    except (ImportError, AttributeError):
        yield
        return
    config.save.compute_crc32, config.save.use_pinned_memory_for_d2h = False, PINNED_D2H
    try:
        yield
    finally:
        config.save.compute_crc32, config.save.use_pinned_memory_for_d2h = saved


@contextlib.contextmanager
def early_writeback(step_dir: Path, interval_s: float = 0.25) -> Iterator[None]:
    """Keep the disk writing while torch.save is still serialising into the page cache.

    On a machine with plenty of RAM a multi-GB save lands entirely in dirty pages (below the kernel's
    background-writeback threshold), and the disk only starts at the commit's fsync: serialisation
    time + disk time, one after the other. A thread that fdatasyncs the step's files every
    `interval_s` makes them overlap: a 17 GB save went from 43% to 63-72% of the disk's speed, and the
    commit's fsync from ~7 s to 0.1 s (benchmarks/RESULTS.md).
    """
    stop = threading.Event()

    def flush_loop() -> None:
        while not stop.wait(interval_s):
            for path in _files_under(step_dir):
                try:
                    fd = os.open(path, os.O_RDONLY)
                except OSError:
                    continue  # renamed or removed by the writer meanwhile
                try:
                    os.fdatasync(fd)
                except OSError:
                    pass  # a filesystem that cannot sync here: the commit's fsync still covers it
                finally:
                    os.close(fd)

    thread = threading.Thread(target=flush_loop, name="checkpoint-writeback", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _files_under(path: Path) -> list[str]:
    out = []
    for root, _dirs, files in os.walk(path):
        out.extend(os.path.join(root, f) for f in files)
    return out


def save(engine, save_dir: Path, step: int, *, rank: int, world_size: int, zero_stage: int, keep: int,
         client_state: dict, barrier: Callable[[], None], crash_in_save: bool = False,
         fast_serialization: bool = True, mode: str = "sync") -> None:
    """The whole protocol; every rank calls it. `fast_serialization=False` is torch.save's default path
    without early writeback (kept for the checkpoint benchmark's side-by-side figure). `mode="async"`
    returns once the state is in host memory (see save_async), where every node has the memory for it."""
    if mode not in MODES:
        raise ConfigError(tr("--checkpoint-mode {v!r} is not one of {choices}", v=mode, choices=", ".join(MODES)),
                          tr("use --checkpoint-mode sync or async"), setting="--checkpoint-mode")
    if mode == "async" and async_fits(engine, rank):
        save_async(engine, save_dir, step, rank=rank, world_size=world_size, zero_stage=zero_stage, keep=keep,
                   client_state=client_state, barrier=barrier, crash_in_save=crash_in_save)
        return
    wait_pending()
    if rank == 0:
        set_aside_uncommitted(save_dir, step)
    barrier()
    writing = contextlib.ExitStack()
    if fast_serialization:
        writing.enter_context(fast_torch_save())
        writing.enter_context(early_writeback(save_dir / tag_for(step)))
    with writing:
        engine.save_checkpoint(str(save_dir), tag=tag_for(step), client_state=client_state, save_latest=False)
    if crash_in_save:
        # Fault knob (--fault crash-in-save@N): die after the shards are written, before the commit.
        print(f"fault injected: crashing in the middle of saving {tag_for(step)}", flush=True)
        os._exit(17)
    barrier()
    if rank == 0:
        missing = expected_files_present(save_dir / tag_for(step), zero_stage, world_size)
        if missing:
            raise CheckpointError(tr("checkpoint {tag} is incomplete: {what}; not committed", tag=tag_for(step), what=missing),
                                  tr("check free space and that --save-dir is on storage shared by all nodes"),
                                  setting="--save-dir")
        commit(save_dir, step, {"world_size": world_size, "zero_stage": zero_stage, **batch_info(engine, world_size)})
        apply_retention(save_dir, keep)
    barrier()


@dataclass(frozen=True)
class Resumed:
    """What a resume loaded: the committed step and the client state saved with it."""

    step: int
    path: Path
    client_state: dict


def agreed_step(step: int | None, device) -> int | None:
    """The resume step every rank chose from its own view of the save directory; they must agree (they do
    not when the directory is node-local instead of shared), or ranks would train from different states."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    seen = torch.tensor([-1 if step is None else step] * 2, dtype=torch.long, device=device)
    seen[1].neg_()
    dist.all_reduce(seen, op=dist.ReduceOp.MAX)
    low, high = -seen[1].item(), seen[0].item()
    if low != high:
        raise CheckpointError(
            tr("ranks see different committed checkpoints (newest between step-{low} and step-{high})", low=low,
               high=high),
            tr("put the checkpoint directory on storage shared by all nodes"), setting="--save-dir")
    return None if high < 0 else high


def verify_shared(step_dir: Path, rank: int, world_size: int) -> None:
    """`verify` before a resume, each rank hashing its share of the files (the reads also warm the page
    cache for the load that follows); every rank raises the same error when any share is damaged."""
    import torch.distributed as dist  # noqa: PLC0415

    commit, problem = _load_commit(step_dir)
    names = sorted(commit.get("files") or {}) if problem is None else []
    mine = verify(step_dir, names[rank::world_size]) if names else [problem or tr("{file} lists no file",
                                                                                  file=COMMIT_FILE)]
    everyone: list = [None] * world_size
    dist.all_gather_object(everyone, mine)
    problems = [p for share in everyone for p in share or []]
    if problems:
        raise CheckpointError(
            tr("the committed checkpoint {path} is damaged: {problem}", path=step_dir, problem="; ".join(problems[:3])),
            tr("move it aside (mv {path} {path}.damaged) and launch again: training resumes from the committed "
               "step before it", path=step_dir), setting="--resume")


def record_resume(run_dir: str | os.PathLike | None, attempt: str | None, step: int | None, via: str) -> None:
    """Rank 0: leave word in the run directory that this attempt resumed from `step` (None: found nothing
    to resume), so `status` can say whether a restart continued or started from scratch."""
    if not run_dir or not attempt or not attempt.isdigit():
        return  # not a supervised run: nobody asks
    try:
        folder = Path(run_dir) / RESUMES_DIR
        folder.mkdir(exist_ok=True)
        atomic_write_json(folder / f"attempt-{int(attempt)}.json",
                          {"attempt": int(attempt), "step": step, "via": via, "time": time.time()})
    except OSError:
        pass  # bookkeeping only: never fail a training run over it


def _load_universal(engine, step_dir: Path, rank: int, load_kwargs: dict | None):
    """Rank 0 converts the step (every other rank waits), then all load it re-partitioned for this run."""
    import torch.distributed as dist  # noqa: PLC0415

    saved = (read_commit(step_dir) or {}).get("world_size")
    if rank == 0:
        t0 = time.monotonic()
        print(f"converting {step_dir.name} (saved by {saved} ranks) to DeepSpeed's universal checkpoint format for "
              f"{dist.get_world_size()} ranks", flush=True)
        to_universal(step_dir)
        print(f"converted {step_dir.name} in {time.monotonic() - t0:.1f} s", flush=True)
    dist.barrier()
    config = engine._config  # DeepSpeed reads checkpoint.load_universal from here at load time only
    before = config.load_universal_checkpoint
    config.load_universal_checkpoint = True
    try:
        return engine.load_checkpoint(str(step_dir), tag=UNIVERSAL_DIR, **(load_kwargs or {}))
    finally:
        config.load_universal_checkpoint = before


def read_resume(run_dir: Path, attempt: int) -> dict | None:
    """What rank 0 of an attempt recorded about its resume (`record_resume`), or None when nothing did:
    the program does not use dscluster's checkpoints (or has not reached its resume yet)."""
    import json  # noqa: PLC0415

    try:
        got = json.loads((Path(run_dir) / RESUMES_DIR / f"attempt-{int(attempt)}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return None
    return got if isinstance(got, dict) else None


def resume(engine, save_dir: Path, step: int | None, *, rank: int, world_size: int, zero_stage: int, device,
           via: str, load_kwargs: dict | None = None) -> Resumed | None:
    """Every rank, after distributed init: agree on `step` (newest committed, or None), verify it against
    COMMIT.json, refuse a layout this run cannot read, load it through DeepSpeed; rank 0 records the resume."""
    step = agreed_step(step, device)
    resumed = None
    if step is not None:
        step_dir = Path(save_dir) / tag_for(step)
        verify_shared(step_dir, rank, world_size)
        check_compatible(Path(save_dir), step, zero_stage, world_size)
        if needs_universal(step_dir, zero_stage, world_size):
            path, client = _load_universal(engine, step_dir, rank, load_kwargs)
        else:
            path, client = engine.load_checkpoint(str(save_dir), tag=tag_for(step), **(load_kwargs or {}))
        if path is None:
            raise CheckpointError(tr("could not load {tag} from {path}", tag=tag_for(step), path=save_dir),
                                  tr("check that the checkpoint files are readable"), setting="--resume")
        resumed = Resumed(int((client or {}).get("step", step)), step_dir, dict(client or {}))
    if rank == 0:
        record_resume(os.environ.get("DSCLUSTER_RUN_DIR"), os.environ.get("DSCLUSTER_ATTEMPT"), step, via)
    return resumed


# ---- asynchronous save -----------------------------------------------------------------------------
# Training pauses only while the state is copied to host memory (pinned for GPU tensors); a thread on
# every rank writes and fsyncs the files, then leaves `.written-rank-R` in the step directory; rank 0's
# thread waits for every rank's marker, removes them and commits exactly as the synchronous path does.
# No collective runs off the main thread. A rank that dies mid-write leaves no marker, so the step is
# never committed and `latest` still names the previous one. The next save (or `wait_pending`) waits
# for the one in flight first: at most one at a time.

WRITTEN_PREFIX = ".written-rank-"
MODES = ("sync", "async")


class _Snapshotting:
    """Stands in for the engine's checkpoint engine during one save_checkpoint: every save(state, path)
    copies the state to host memory and queues it; the rest (create, commit, load, ...) is DeepSpeed's."""

    def __init__(self, inner, pinned: bool):
        self._inner, self._pinned, self.queued = inner, pinned, []

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def save(self, state_dict, path: str):
        self.queued.append((snapshot(state_dict, self._pinned), str(path)))


def snapshot(obj, pinned: bool = False, _memo: dict | None = None):
    """A deep copy of a state dict's tensors in host memory, storage sharing kept (views of one storage stay
    views of one copy, as torch.save would have written them); other values are kept as they are."""
    import torch  # noqa: PLC0415

    memo = {} if _memo is None else _memo
    if isinstance(obj, torch.Tensor):
        storage = obj.untyped_storage()
        key = (storage.data_ptr(), obj.device, storage.nbytes())
        if key not in memo:
            raw = torch.empty(0, dtype=torch.uint8, device=obj.device).set_(storage)
            base = torch.empty(storage.nbytes(), dtype=torch.uint8, pin_memory=pinned and obj.is_cuda)
            base.copy_(raw, non_blocking=obj.is_cuda)
            memo[key] = base
        out = torch.empty(0, dtype=obj.dtype).set_(memo[key].untyped_storage(), obj.storage_offset(), obj.size(),
                                                  obj.stride())
        return out.requires_grad_(False)
    if isinstance(obj, dict):
        try:
            out = obj.__class__()  # OrderedDict stays one
        except TypeError:
            out = {}
        for k, v in obj.items():
            out[k] = snapshot(v, pinned, memo)
        return out
    if isinstance(obj, list):
        return [snapshot(v, pinned, memo) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(snapshot(v, pinned, memo) for v in obj)
    return obj


def state_bytes(engine) -> int:
    """This rank's share of a checkpoint, estimated before the first one exists: the module's parameters
    plus fp32 master weights and two Adam moments, split over the ranks when ZeRO partitions them."""
    import torch.distributed as dist  # noqa: PLC0415

    numel = sum(p.numel() for p in engine.module.parameters())
    elem = next(engine.module.parameters()).element_size() if numel else 4
    world = dist.get_world_size() if dist.is_initialized() else 1
    optim = 12 * numel
    return numel * elem + (optim // world if engine.zero_optimization_stage() > 0 else optim)


def host_memory_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def async_refusal(needed: int, local_ranks: int, available: int | None) -> str | None:
    """Why an asynchronous save would not fit in host memory (None: it fits). Every rank on this node
    holds its own snapshot, and the page cache needs room too: 1.5x the sum is asked for."""
    if available is None:
        return None
    want = int(needed * max(1, local_ranks) * 1.5)
    if want <= available:
        return None
    return tr("an asynchronous checkpoint needs about {need:,.1f} GiB of host memory on this node ({n} ranks), "
              "{have:,.1f} GiB is available: saving synchronously", need=want / 2**30, n=local_ranks,
              have=available / 2**30)


def async_fits(engine, rank: int) -> bool:
    """Every rank's node has the host memory for its ranks' snapshots; all ranks agree (one collective), so
    no rank takes the synchronous path while another takes the asynchronous one. Says why when not."""
    import torch  # noqa: PLC0415
    import torch.distributed as dist  # noqa: PLC0415

    local = int(os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get("LOCAL_SIZE") or 1)
    why = async_refusal(state_bytes(engine), local, host_memory_available())
    fits = torch.tensor([0 if why else 1], dtype=torch.long, device=engine.device)
    if dist.is_initialized():
        dist.all_reduce(fits, op=dist.ReduceOp.MIN)
    if why and int(os.environ.get("LOCAL_RANK", "0")) == 0:
        print(f"warning: {why}", flush=True)
    elif not fits.item() and rank == 0:
        print("warning: " + tr("another node lacks the host memory for an asynchronous checkpoint: saving "
                               "synchronously"), flush=True)
    return bool(fits.item())


class PendingSave:
    """The background half of one asynchronous save on this rank."""

    def __init__(self, save_dir: Path, step: int, queued: list, *, rank: int, world_size: int, zero_stage: int,
                 keep: int, crash_mid_write: bool = False, batch: dict | None = None):
        self.save_dir, self.step, self.rank, self.world = save_dir, step, rank, world_size
        self.zero_stage, self.keep, self.crash = zero_stage, keep, crash_mid_write
        self.batch = dict(batch or {})
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(queued,), name=f"checkpoint-{tag_for(step)}",
                                       daemon=True)
        self.thread.start()

    def _run(self, queued: list) -> None:
        import torch  # noqa: PLC0415

        try:
            step_dir = self.save_dir / tag_for(self.step)
            with fast_torch_save(), early_writeback(step_dir):
                for i, (state, path) in enumerate(queued):
                    torch.save(state, path)
                    _fsync_file(path)
                    if self.crash and i == 0:
                        print(f"fault injected: crashing while writing {tag_for(self.step)} in the background",
                              flush=True)
                        os._exit(17)
            queued.clear()  # the host copies can go now
            marker = step_dir / f"{WRITTEN_PREFIX}{self.rank}"
            atomic_write_text(marker, str(self.step))
            if self.rank == 0:
                self._commit(step_dir)
        except BaseException as exc:  # noqa: BLE001 - reported on the main thread by wait()
            self.error = exc

    def _commit(self, step_dir: Path) -> None:
        markers = [step_dir / f"{WRITTEN_PREFIX}{r}" for r in range(self.world)]
        while not all(m.exists() for m in markers):
            time.sleep(0.05)  # a rank that died never writes its marker: the run is torn down meanwhile
        for m in markers:
            m.unlink()
        missing = expected_files_present(step_dir, self.zero_stage, self.world)
        if missing:
            raise CheckpointError(tr("checkpoint {tag} is incomplete: {what}; not committed", tag=tag_for(self.step),
                                     what=missing),
                                  tr("check free space and that --save-dir is on storage shared by all nodes"),
                                  setting="--save-dir")
        commit(self.save_dir, self.step, {"world_size": self.world, "zero_stage": self.zero_stage, **self.batch})
        apply_retention(self.save_dir, self.keep)

    def wait(self) -> None:
        self.thread.join()
        if self.error is not None:
            raise self.error


_pending: PendingSave | None = None


def wait_pending() -> int | None:
    """Wait for this rank's save in flight (rank 0: until it is committed); returns its step."""
    global _pending
    pending, _pending = _pending, None
    if pending is None:
        return None
    pending.wait()
    return pending.step


def pending_step() -> int | None:
    """The step this rank is writing in the background, if any."""
    return _pending.step if _pending is not None else None


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_async(engine, save_dir: Path, step: int, *, rank: int, world_size: int, zero_stage: int, keep: int,
               client_state: dict, barrier: Callable[[], None], crash_in_save: bool = False) -> None:
    """The asynchronous variant of `save`: returns once the state is in host memory on every rank."""
    global _pending
    import torch  # noqa: PLC0415

    wait_pending()
    if rank == 0:
        set_aside_uncommitted(save_dir, step)
    barrier()
    original = engine.checkpoint_engine
    snap = _Snapshotting(original, pinned=torch.cuda.is_available())
    engine.checkpoint_engine = snap
    try:
        engine.save_checkpoint(str(save_dir), tag=tag_for(step), client_state=client_state, save_latest=False)
    finally:
        engine.checkpoint_engine = original
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # the pinned copies were asynchronous
    _pending = PendingSave(save_dir, step, snap.queued, rank=rank, world_size=world_size, zero_stage=zero_stage,
                           keep=keep, crash_mid_write=crash_in_save, batch=batch_info(engine, world_size))
