"""Which committed step a run resumes from, without torch: `--resume` resolved against the save dir, the
checkpoint variables the supervisor gives every attempt, a step another ZeRO layout cannot read, a step
saved by another number of ranks (converted to DeepSpeed's universal format), and the per-attempt note
rank 0 leaves about its resume (what `status` reads to tell a resumed restart from a fresh start).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.fsutil import atomic_write_json, fsync_dir
from dscluster.i18n import tr
from dscluster.train.commits import (
    CHECKPOINT_DIR_ENV,
    RESUME_STEP_ENV,
    RESUMES_DIR,
    CheckpointError,
    committed_steps,
    damage,
    fsync_tree,
    hash_threads,
    latest_committed,
    read_commit,
    step_of,
    tag_for,
)

UNIVERSAL_DIR = "universal"


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
    workers = max(1, min(4, hash_threads()))
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
    fsync_tree(tmp)
    os.replace(tmp, out)
    fsync_dir(step_dir)
    return out


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


def read_resume(run_dir: Path, attempt: int) -> dict | None:
    """What rank 0 of an attempt recorded about its resume (`record_resume`), or None when nothing did:
    the program does not use dscluster's checkpoints (or has not reached its resume yet)."""

    try:
        got = json.loads((Path(run_dir) / RESUMES_DIR / f"attempt-{int(attempt)}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return None
    return got if isinstance(got, dict) else None
