"""`dscluster launch --sbatch`: the run as a Slurm batch job whose first node runs the run's supervisor, which
starts one srun step per attempt inside the job's allocation (restarts never wait in the queue again).

The run's directory and record are the service's (runs/service.submit writes them); this module writes
what only the submitting user may write (the hand-off and the script, in <DSCLUSTER_HOME>/slurm-jobs/<run id>)
and submits the job."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dscluster.launcher.backends.slurm import clients


def script_text(record, run_dir: Path, supervisor: str, private_dir: Path | None = None) -> str:
    """The batch script of the run (`supervisor`: the supervisor's module, run with `--handoff FILE RUN_DIR`)."""
    cfg = record.launch
    return clients.sbatch_script(run_id=record.id, ask=clients.SlurmAsk(**cfg.scheduler["ask"]), python=cfg.python,
                                 run_dir=run_dir, env={}, private_dir=private_dir, supervisor=supervisor)


def private_job_dir(run_id: str) -> Path:
    """<DSCLUSTER_HOME>/slurm-jobs/<run id>, made 0700 (and slurm-jobs, 0700, by the first batch job of
    this home; every later one finds it there)."""
    from dscluster.fsutil import make_dir  # noqa: PLC0415
    from dscluster.paths import home  # noqa: PLC0415

    private = home() / "slurm-jobs" / run_id
    if not private.parent.is_dir():
        try:
            make_dir(private.parent, 0o700)
        except FileExistsError:
            pass  # made meanwhile by another submission
    make_dir(private, 0o700)
    return private


def submit(record, run_dir: Path, secrets: Mapping[str, str] | None, supervisor: str) -> tuple[str, dict[str, Any]]:
    """Write the hand-off (record and secrets) and job.sbatch where only this user can write (the batch job's
    nodes must see $DSCLUSTER_HOME, as they see a shared home; the run dir is the node user's to write) and
    submit the job: (job id, what the record's `scheduler` says of it). The supervisor starts when the job
    does, on its first node, and records its pid and host then."""
    from dscluster.fsutil import atomic_write_text  # noqa: PLC0415

    private = private_job_dir(record.id)
    atomic_write_text(private / "handoff.json", json.dumps({"record": record.to_json(), "secrets": dict(secrets or {})},
                                                           default=str), 0o600)
    script = private / "job.sbatch"
    atomic_write_text(script, script_text(record, run_dir, supervisor, private), 0o700)
    job = clients.submit_batch(script, cwd=record.launch.cwd)
    return job, {"job_id": job, "state": "PENDING", "own_job": False, "batch": True}
