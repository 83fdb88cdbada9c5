"""A run as every view shows it: the status to show, why it ended, its attempts, its checkpoints, its last
metrics. `dscluster status` and `dscluster runs`, the Python API (`Run.summary`) and the JupyterLab panel
format this one summary, so they cannot disagree on a run: a run whose supervisor is gone is "lost" with
the same explanation everywhere, and its last committed step is looked up where the run saves (its
--save-dir may be outside the run directory) by the checkpoint protocol's reader (train/checkpoint).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dscluster.runs import store


@dataclass(frozen=True)
class RunSummary:
    id: str
    name: str
    status: str  # shown: the record's, or "lost" when its supervisor is gone
    explanation: dict | None  # as recorded (cause and fix in English with placeholders), or why it is lost
    attempts: tuple[dict, ...]  # as recorded, each with `resumed`: what its trainer said it resumed from
    last_checkpoint_step: int | None  # the newest committed step where the run saves
    save_dir: Path
    metrics: dict | None  # each value's newest reading (runs.metrics.latest); None: no metrics yet
    slurm: dict | None  # launcher.slurm.job_summary: the job, its state, its time left
    world_size: int | None
    created: str | None
    exit_code: int | None
    total_steps: int | None  # the program's --steps, when it was given one (the panel's progress)

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready fields (for `--json` output)."""
        return {"id": self.id, "name": self.name, "status": self.status, "explanation": self.explanation,
                "attempts": list(self.attempts), "last_checkpoint_step": self.last_checkpoint_step,
                "metrics": self.metrics, "slurm": self.slurm, "world_size": self.world_size,
                "created": self.created, "exit_code": self.exit_code}


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def summarize(run_dir: Path, record: dict | None = None) -> RunSummary:
    """The summary of the run in `run_dir` (its record read there unless given: a record the caller read
    already, or the store's pending placeholder)."""
    from dscluster.launcher.slurm import job_summary
    from dscluster.runs import metrics as run_metrics
    from dscluster.runs.start import LOST, lost_explanation, shown_status
    from dscluster.train.checkpoint import latest_committed, read_resume

    run_dir = Path(run_dir)
    rec = record if record is not None else store.read_record_or_pending(run_dir)
    status = shown_status(rec)
    explanation = rec.get("explanation") if isinstance(rec.get("explanation"), dict) else None
    if status == LOST:
        explanation = explanation or lost_explanation(rec)
    attempts = tuple({**a, "resumed": read_resume(run_dir, a["n"])} if isinstance(a.get("n"), int) else a
                     for a in (rec.get("attempts") or []) if isinstance(a, dict))
    save_dir = store.save_dir(run_dir, rec)
    step = _int_or_none(rec.get("last_checkpoint_step"))
    if step is None and rec.get("launch"):
        step = latest_committed(save_dir)  # the trainer may save outside the run directory (--save-dir)
    steps = store.launch_arg(rec, "--steps")
    return RunSummary(id=str(rec.get("id") or run_dir.name), name=rec.get("name") or run_dir.name.rsplit("-", 3)[0],
                      status=status, explanation=explanation, attempts=attempts, last_checkpoint_step=step,
                      save_dir=save_dir, metrics=run_metrics.latest(run_dir), slurm=job_summary(rec),
                      world_size=_int_or_none(rec.get("world_size")), created=rec.get("created"),
                      exit_code=_int_or_none(rec.get("exit_code")),
                      total_steps=int(steps) if steps and steps.isdigit() else None)
