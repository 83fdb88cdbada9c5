"""What a run looks like to whoever asks (`dscluster status`/`runs`, the Python API): one `summary(record,
run_dir)` computes the shown status, its explanation, the attempts (with whether each resumed), the newest
committed checkpoint, the last metrics and the scheduler's job, so every view shows the same answer.

The views only format a `RunSummary`; `to_json()` is `dscluster status --json`'s object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dscluster.runs.records import store
from dscluster.runs.records.owner import owner_of
from dscluster.runs.records.record import Attempt, RunRecord, scheduler_key


@dataclass(frozen=True)
class ShownAttempt:
    """An attempt as shown: the recorded one and how it resumed (the trainer's resume file), if known."""

    attempt: Attempt
    resumed: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.attempt.to_json(), "resumed": self.resumed}


@dataclass(frozen=True)
class RunSummary:
    """A run as the views show it; `status` is the shown one ("lost" for an active run whose supervisor is gone)."""

    record: RunRecord
    status: str
    run_dir: Path | None = None
    attempts: tuple[ShownAttempt, ...] = ()
    last_checkpoint_step: int | None = None
    explanation: Mapping[str, Any] | None = None
    metrics: Mapping[str, Any] | None = None
    scheduler: Mapping[str, Any] | None = None  # Backend.job_summary: the job as its scheduler says it now
    notice: str | None = None  # while the first attempt's ranks likely still compile DeepSpeed ops
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def exit_code(self) -> int | None:
        return self.record.exit_code

    @property
    def waiting_for(self) -> tuple[str, ...] | None:
        return self.record.waiting_for

    @property
    def shrinks(self) -> tuple[Mapping[str, Any], ...]:
        return self.record.shrinks

    @property
    def batch_plan(self) -> Mapping[str, Any] | None:
        return self.record.batch_plan

    def to_json(self) -> dict[str, Any]:
        """`dscluster status --json`: the record's own fields as shown, and what was computed here."""
        rec = self.record
        out: dict[str, Any] = {
            "id": rec.id, "name": rec.name, "status": self.status, "exit_code": rec.exit_code,
            "attempts": [a.to_json() if self.run_dir is not None else a.attempt.to_json() for a in self.attempts],
            "last_checkpoint_step": self.last_checkpoint_step, "explanation": self.explanation,
            "world_size": rec.world_size, "cluster": rec.cluster, "created": rec.created, "ended": rec.ended,
            "supervisor_pid": rec.supervisor_pid, "supervisor_host": rec.supervisor_host,
            "waiting_for": list(rec.waiting_for) if rec.waiting_for is not None else None,
            "shrinks": [dict(s) for s in rec.shrinks] or None, "batch_plan": rec.batch_plan,
            "excluded": [dict(e) for e in rec.excluded] or None, "owner": owner_of(rec, self.run_dir),
        }
        if self.run_dir is not None:
            out["metrics"] = self.metrics
        if rec.launch.backend.allocates:  # under the backend's own key, as run.json has it
            out[scheduler_key(rec.launch.launcher)] = self.scheduler
        return {**out, **self.extra}


def summary(record: RunRecord, run_dir: Path | None = None, *, live: bool = True) -> RunSummary:
    """The run as shown. With `run_dir`: the newest committed step where the run saves (the trainer may
    save outside the run directory, --save-dir), the last metrics (a script's dscluster.log and
    DeepSpeed's monitor, merged) and how each attempt resumed. `live`: ask the scheduler about an active job."""
    from dscluster.runs.preparing.start import LOST, lost_explanation, shown_status

    status = shown_status(record)
    step = record.last_checkpoint_step
    metrics = notice = None
    attempts = tuple(ShownAttempt(a) for a in record.attempts)
    if run_dir is not None:
        from dscluster.runs.records import metrics as run_metrics
        from dscluster.train.commits import latest_committed
        from dscluster.train.resumes import read_resume

        if step is None:
            step = latest_committed(store.save_dir(run_dir, record))
        metrics = run_metrics.latest(run_dir)
        attempts = tuple(ShownAttempt(a, read_resume(run_dir, a.n)) for a in record.attempts)
        notice = building_notice(record, Path(run_dir), status)
    explanation = record.explanation
    if status == LOST:
        explanation = explanation or lost_explanation(record)
    job = record.launch.backend.job_summary(record.scheduler, live and record.status in store.ACTIVE)
    return RunSummary(record, status, Path(run_dir) if run_dir is not None else None, attempts, step, explanation,
                      metrics, job, notice)


def building_notice(record: RunRecord, run_dir: Path, status: str) -> str | None:
    """While an active run's ranks are still likely compiling DeepSpeed ops (recorded at launch), say so:
    until the first metrics, within twice the typical build time of the first attempt's start."""
    import datetime as _dt

    from dscluster.launcher.ops import typical_build_s
    from dscluster.runs.preparing.prepare import first_run_notice

    if status not in store.ACTIVE or (run_dir / "metrics.jsonl").exists():
        return None
    builds = record.first_run_builds
    attempts = record.attempts
    if not isinstance(builds, Mapping) or len(attempts) != 1 or not attempts[0].started:
        return None
    try:
        elapsed = (_dt.datetime.now().astimezone() - _dt.datetime.fromisoformat(attempts[0].started)).total_seconds()
    except (TypeError, ValueError):
        return None
    if elapsed > 2 * typical_build_s(str(builds.get("accelerator"))) * len(builds.get("ops") or ()):
        return None
    return first_run_notice(record)


def read_summary(run_dir: Path) -> RunSummary:
    """`summary` of the record in `run_dir` (damaged records raise as store.read_record does)."""
    return summary(store.read_record(run_dir), run_dir)


@dataclass(frozen=True)
class Checkpoint:
    """A committed checkpoint of a run (COMMIT.json present), with what `train.checkpoint.damage` finds wrong."""

    step: int
    path: Path
    bytes: int
    committed: float  # COMMIT.json's mtime
    damage: str | None

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "path": str(self.path)}


def checkpoints(save_dir: Path) -> list[Checkpoint]:
    """Committed checkpoints, oldest first, through train/checkpoint's one reader; uncommitted ones are never
    listed, damaged ones are, with the damage."""
    from dscluster.train.commits import damage, step_dirs

    out = []
    for step_dir in (s for s in step_dirs(save_dir) if s.committed):
        path = step_dir.path
        files = [p for p in path.rglob("*") if p.is_file()]
        out.append(Checkpoint(step_dir.step, path, sum(p.stat().st_size for p in files),
                              (path / "COMMIT.json").stat().st_mtime, damage(path)))
    return out
