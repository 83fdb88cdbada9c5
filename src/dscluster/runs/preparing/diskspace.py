"""A full disk: what the next checkpoint needs, what is free, and what a run that hit ENOSPC is told.

A run writes on the shared directory (run directory, checkpoints), the controller's state directory and
each node's /tmp or /dev/shm. When one fills up:
- the supervisor keeps supervising (its record writes fail one at a time, atomically: the previous
  run.json stays whole) and ends the run `failed` with the cause "no space left on device: PATH (N MiB
  free; the last checkpoint took M MiB)" and the fix, never restarting it into a disk that is still full;
- the launch pre-flight (and so `restart`) refuses a start whose checkpoint directory has less free space
  than the next checkpoint needs: the last committed one's size, else an estimate from the model size.

Stdlib only (the supervisor and the pre-flight import it; no torch).
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from dscluster import explain as explainer
from dscluster.errors import ClusterError
from dscluster.i18n import tr

MIB = 1 << 20
# Bytes a checkpoint holds per model parameter (bf16/fp16 weights, fp32 master weights, two Adam moments):
# the estimate before a run has committed one (train.checkpoint.state_bytes counts the same, per rank).
BYTES_PER_PARAM = 16
MIN_FREE = 1 * MIB  # less than this free where the run writes its logs and records: the disk is full
RESERVE = ".space-reserve"  # in the run directory: given up so the final record fits on a full disk
RESERVE_BYTES = 1 * MIB
SIGNATURE = "disk-full"
CAUSE = "no space left on device: {path} ({free} MiB free; the last checkpoint took {last} MiB)"
CAUSE_NO_CKPT = "no space left on device: {path} ({free} MiB free; no checkpoint was committed yet)"
FIX = ("Free space on {path}'s disk, keep fewer checkpoints (the trainer's --keep N, or keep= of "
       "dscluster.checkpoint.save), or put checkpoints on another disk (--save-dir); then dscluster restart {run} "
       "(it resumes from the newest committed checkpoint). Steps set aside as step-N.incomplete-* can be deleted.")
# A path in an ENOSPC message: "[Errno 28] No space left on device: '/path'" (Python), "...: /path" (shells).
_PATH_IN = re.compile(r"No space left on device:?\s*'?(/[^'\s:]+)", re.IGNORECASE)


def mib(n: int | None) -> str:
    """Bytes as MiB, as precise as a small figure needs (a tiny checkpoint is not "0 MiB")."""
    v = (n or 0) / MIB
    return f"{v:,.0f}" if v >= 100 or v == 0 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def existing(path: Path) -> Path:
    """The path itself or its nearest ancestor that exists (a checkpoint directory not made yet)."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def free_bytes(path: Path) -> int | None:
    """Bytes an unprivileged writer can still write on `path`'s filesystem (statvfs f_bavail), or None."""
    try:
        st = os.statvfs(existing(path))
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def last_checkpoint_bytes(save_dir: Path) -> int | None:
    """The size COMMIT.json recorded for the newest committed checkpoint of `save_dir`, or None."""
    from dscluster.train.commits import latest_committed, read_commit, tag_for  # noqa: PLC0415

    step = latest_committed(save_dir)
    if step is None:
        return None
    commit = read_commit(Path(save_dir) / tag_for(step)) or {}
    return sum((commit.get("files") or {}).values()) or None


def reference_model_bytes(args: list[str]) -> int | None:
    """A checkpoint of the reference trainer, estimated from its model size (its own options), or None."""
    try:
        from dscluster.train.config import param_count  # noqa: PLC0415 - only for the reference trainer
        from dscluster.train.options import build_parser, model_config  # noqa: PLC0415

        parsed, _ = build_parser().parse_known_args(args)
        return param_count(model_config(parsed, vocab_size=257)) * BYTES_PER_PARAM
    except (ImportError, SystemExit, Exception):  # noqa: BLE001 - an estimate only; the ranks check their options
        return None


def needed_bytes(save_dir: Path, estimate: int | None = None) -> tuple[int | None, str]:
    """(bytes the next checkpoint needs, where the figure comes from): the last committed checkpoint, else
    `estimate` (from the model size), else (None, "") when neither is known."""
    last = last_checkpoint_bytes(save_dir)
    if last is not None:
        return last, tr("the last committed checkpoint took")
    if estimate:
        return estimate, tr("the model's checkpoint needs about")
    return None, ""


def check_room(save_dir: Path, estimate: int | None = None) -> None:
    """The launch pre-flight: refuse when `save_dir`'s disk has less free space than the next checkpoint needs."""
    need, source = needed_bytes(save_dir, estimate)
    free = free_bytes(save_dir)
    if need is None or free is None or free >= need:
        return
    where = existing(save_dir)
    raise ClusterError(
        tr("not enough free space for the next checkpoint in {path}: {free} MiB free, {source} {need} MiB",
           path=save_dir, free=mib(free), source=source, need=mib(need)),
        tr("free space on {where}'s disk, keep fewer checkpoints (the trainer's --keep N), or put checkpoints on "
           "another disk (--save-dir)", where=where))


def full_disk(*dirs: Path, need: int | None = None) -> Path | None:
    """After a failure: the first of `dirs` (the checkpoint directory, the run directory) whose disk is
    full, or None. Full: less than MIN_FREE left, or, when the failure was a failed write (`need`: what the
    last checkpoint took), less than the next checkpoint needs: a writer that gave up removes its partial
    file, so the disk it filled looks half empty again. A rank that died of a full disk often could not
    even log why (its log is on that disk), so the supervisor looks at the disks themselves."""
    floor = max(MIN_FREE, need or 0)
    for path in dirs:
        free = free_bytes(path)
        if free is not None and free < floor:
            return existing(path)
    return None


def failed_write(evidence: str | None) -> bool:
    """Whether a rank's error is a write that failed without saying why (explain's write-failed signature:
    PyTorch's writers report no ENOSPC)."""
    sig = next(s for s in explainer.SIGNATURES if s.name == "write-failed")
    return bool(evidence and sig.pattern.search(evidence))


def is_enospc(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


def path_in(evidence: str) -> str | None:
    match = _PATH_IN.search(evidence or "")
    return match.group(1) if match else None


CAUSE_NODE = "no space left on device: {path} on {node} (a disk of that node's own, not the shared storage)"
FIX_NODE = ("Free space on {node} (`df -h {path}` there shows what is left), or point the program's scratch files "
            "at a larger disk (TMPDIR); then dscluster restart {run} (it resumes from the newest committed "
            "checkpoint).")


def _under(path: Path, *roots: Path) -> bool:
    path = Path(os.path.abspath(path))
    return any(path == Path(os.path.abspath(r)) or Path(os.path.abspath(r)) in path.parents for r in roots if r)


def explanation(save_dir: Path, run_id: str, evidence: str = "", path: str | None = None,
                shared: Path | None = None, node: str | None = None) -> explainer.Explanation:
    """The run's cause and fix for a full disk: the path that filled (named in the error, else the checkpoint
    directory), what is free there now and what the last checkpoint took. Never retried automatically:
    restarting into a full disk fails the same way (the pre-flight of `restart` checks the room).
    A path outside the shared storage and the checkpoint directory that a rank on `node` named (its /tmp)
    is that node's own disk: what is free here says nothing about it, so no figure is given."""
    named = path_in(evidence)
    if named and node and node not in ("localhost", "127.0.0.1") and shared is not None \
            and not _under(Path(named), shared, save_dir):
        return explainer.custom(SIGNATURE, CAUSE_NODE, FIX_NODE, evidence, retry=False, path=named, node=node,
                                run=run_id)
    where = Path(named or path or save_dir)
    free = free_bytes(where)
    last = last_checkpoint_bytes(save_dir)
    params = {"path": str(existing(where)), "free": mib(free), "run": run_id}
    if last is not None:
        return explainer.custom(SIGNATURE, CAUSE, FIX, evidence, retry=False, last=mib(last), **params)
    return explainer.custom(SIGNATURE, CAUSE_NO_CKPT, FIX, evidence, retry=False, **params)
