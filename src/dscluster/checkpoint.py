"""Committed checkpoints and resume for a user's own DeepSpeed script: two calls.

    import dscluster.checkpoint as ckpt

    engine, *_ = deepspeed.initialize(...)
    resumed = ckpt.load_latest(engine)            # None on a fresh start
    start = resumed.step if resumed else 0
    for step in range(start, steps):
        ...train one step...
        if (step + 1) % 100 == 0:
            ckpt.save(engine, step + 1)           # every rank calls it

`save` is the reference trainer's commit protocol (dscluster.train.checkpoint, the one
implementation): every rank writes its shards with DeepSpeed's `save_checkpoint(save_latest=False)`,
a barrier, then rank 0 fsyncs, records sizes and content hashes in step-N/COMMIT.json, replaces
`latest` atomically and deletes committed steps beyond `keep`. A crash at any moment leaves the
previous committed step as the one `load_latest` takes. DeepSpeed's plain `save_checkpoint` writes
`latest` before the last rank has finished, so a crash mid-save can leave a torn checkpoint behind it.

The directory: `save_dir` if given, else DSCLUSTER_CHECKPOINT_DIR, which the supervisor sets for every
attempt of a run (<run-dir>/checkpoints, or the old run's directory for `dscluster restart`). When that
directory holds a committed step at an attempt's start, the supervisor also sets
DSCLUSTER_RESUME_STEP; `load_latest` records in the run directory that it resumed, and `dscluster
status` says plainly when a restarted script did not (it then started from scratch).
"""

from __future__ import annotations

import os
from pathlib import Path

from dscluster.errors import ConfigError
from dscluster.i18n import tr
from dscluster.train import checkpoint as _protocol
from dscluster.train.checkpoint import CheckpointError, Resumed, committed_steps, latest_committed

__all__ = ["CheckpointError", "Resumed", "checkpoint_dir", "committed_steps", "latest_committed", "load_latest",
           "save", "wait"]


def checkpoint_dir(save_dir: str | os.PathLike | None = None) -> Path:
    """Where `save` writes and `load_latest` reads: `save_dir`, else the run's DSCLUSTER_CHECKPOINT_DIR."""
    value = save_dir if save_dir is not None else os.environ.get(_protocol.CHECKPOINT_DIR_ENV)
    if not value:
        raise ConfigError(tr("no checkpoint directory: save_dir is not given and {var} is not set",
                             var=_protocol.CHECKPOINT_DIR_ENV),
                          tr("launch the script with dscluster launch (it sets {var}), or pass save_dir=... on "
                             "storage shared by all nodes", var=_protocol.CHECKPOINT_DIR_ENV), setting="save_dir")
    return Path(value).absolute()


def _ranks() -> tuple[int, int]:
    import torch.distributed as dist  # noqa: PLC0415

    if not (dist.is_available() and dist.is_initialized()):
        raise ConfigError(tr("dscluster.checkpoint needs the process group: call it after deepspeed.initialize"),
                          tr("move the call below deepspeed.initialize(...)"), setting="engine")
    return dist.get_rank(), dist.get_world_size()


def save(engine, step: int, *, save_dir: str | os.PathLike | None = None, keep: int = 3,
         client_state: dict | None = None, mode: str = "sync") -> Path:
    """Save and commit step-`step` on every rank (each rank must call it, with the same step). Returns the
    step's directory. `keep`: committed steps to keep (0 keeps all); uncommitted leftovers of a crashed
    save are renamed aside, never loaded, never deleted. `mode="async"`: returns once the state is in
    host memory; the files are written, fsynced and committed in the background (at most one save in
    flight; the next save waits for it; call `wait()` before the script exits). Falls back to a
    synchronous save, saying so, when a node lacks the host memory for it."""
    import torch.distributed as dist  # noqa: PLC0415

    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ConfigError(tr("checkpoint step must be a non-negative integer, got {v!r}", v=step),
                          tr("pass the number of optimizer steps done, e.g. save(engine, step + 1)"), setting="step")
    rank, world = _ranks()
    folder = checkpoint_dir(save_dir)
    if rank == 0:
        _protocol.check_writable(folder)
    dist.barrier()
    _protocol.save(engine, folder, step, rank=rank, world_size=world, zero_stage=engine.zero_optimization_stage(),
                   keep=keep, client_state={**(client_state or {}), "step": step}, barrier=dist.barrier, mode=mode)
    return folder / _protocol.tag_for(step)


def wait() -> int | None:
    """Wait until this rank's asynchronous save is written (on rank 0: committed); returns its step, or None
    when none was in flight. A process that exits before this loses the step in flight (the previous
    committed step stays the one a restart resumes from)."""
    return _protocol.wait_pending()


def load_latest(engine, *, save_dir: str | os.PathLike | None = None, **load_kwargs) -> Resumed | None:
    """Load the newest committed step into `engine` on every rank (each rank must call it), after checking
    its files against COMMIT.json; None when there is none yet (a fresh start). `load_kwargs` go to
    DeepSpeed's `load_checkpoint` (e.g. load_optimizer_states=False)."""
    rank, world = _ranks()
    folder = checkpoint_dir(save_dir)
    step = _protocol.resolve_resume(folder, "auto")
    expected = os.environ.get(_protocol.RESUME_STEP_ENV, "")
    if rank == 0 and expected.isdigit() and (step is None or step < int(expected)):
        # The supervisor saw a newer committed step in the run's own directory than this one holds.
        print(tr("warning: the run's last committed step is step-{n} in {run_dir}, but {path} holds {have}",
                 n=expected, run_dir=os.environ.get(_protocol.CHECKPOINT_DIR_ENV), path=folder,
                 have=_protocol.tag_for(step) if step is not None else tr("none")), flush=True)
    return _protocol.resume(engine, folder, step, rank=rank, world_size=world,
                            zero_stage=engine.zero_optimization_stage(), device=engine.device,
                            via="dscluster.checkpoint", load_kwargs=load_kwargs)
