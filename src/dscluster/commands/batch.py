"""`dscluster launch` as a scheduler's batch job (its backend's option): a run that outlives the login session,
supervised from inside its job; the backend whose request the options carry writes and submits the job."""

from __future__ import annotations

import sys

from dscluster import console
from dscluster.errors import ExitCode
from dscluster.i18n import tr
from dscluster.runs.preparing.prepare import dry_run_text
from dscluster.runs.records.request import RunRequest


def submit(opts: RunRequest, *, attach: bool | None, dry_run: bool) -> int:
    from dscluster.runs import service

    if dry_run:
        prep = service.prepare_batch(opts)
        print("\n".join(service.batch_preview(prep)))
        print(dry_run_text(prep))
        print(console.next_steps(tr("run it: the same command without --dry-run")))
        return ExitCode.OK
    submitted = service.submit(opts)
    prep, run_id, run_dir, job = submitted.prepared, submitted.run_id, submitted.run_dir, submitted.job_id
    said, watch = prep.record.launch.backend.submitted_lines(run_id, job, prep.record.world_size)
    print(said, flush=True)
    if attach is None:
        attach = sys.stdout.isatty()
    if not attach:
        print(console.next_steps(f"dscluster status {run_id}", f"dscluster logs {run_id} -f", *watch,
                                 f"dscluster stop {run_id}"))
        return ExitCode.OK
    from dscluster.commands.runview import attach_and_wait

    return attach_and_wait(run_dir)
