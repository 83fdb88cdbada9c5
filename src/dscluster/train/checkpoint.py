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

The parts, one module each: train/commits.py (the step layout, COMMIT.json, verify, commit, retention:
no torch), train/resumes.py (which step a run resumes from: no torch), train/writeback.py (fast, durable
writes), train/async_save.py (the asynchronous save); this module is the torch side of a save and a
resume, and every name of the parts stays importable from it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dscluster.errors import ConfigError
from dscluster.i18n import tr

# The protocol's parts, one module each; their names stay importable from here (the trainer and
# dscluster.checkpoint use the whole protocol through this module).
from dscluster.train.async_save import (  # noqa: F401
    MODES,
    WRITTEN_PREFIX,
    PendingSave,
    async_fits,
    async_refusal,
    host_memory_available,
    pending_step,
    save_async,
    snapshot,
    state_bytes,
    wait_pending,
)
from dscluster.train.commits import (  # noqa: F401
    CHECKPOINT_DIR_ENV,
    COMMIT_FILE,
    HASH_NAME,
    LATEST_FILE,
    RESUME_STEP_ENV,
    RESUMES_DIR,
    CheckpointError,
    StepDir,
    apply_retention,
    commit,
    commit_problem,
    committed_steps,
    damage,
    digests,
    expected_files_present,
    file_digest,
    fsync_tree,
    latest_committed,
    latest_tag,
    load_commit,
    not_committed_error,
    read_commit,
    set_aside_uncommitted,
    step_dirs,
    step_of,
    tag_for,
    verify,
)
from dscluster.train.resumes import (  # noqa: F401
    UNIVERSAL_DIR,
    check_compatible,
    check_writable,
    needs_universal,
    read_resume,
    record_resume,
    resolve_resume,
    resume_env,
    step_of_env,
    to_universal,
)
from dscluster.train.writeback import PINNED_D2H, batch_info, early_writeback, fast_torch_save  # noqa: F401


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

    commit, problem = load_commit(step_dir)
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
