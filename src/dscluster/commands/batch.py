"""`dscluster launch` as a scheduler's batch job (its backend's option): a run that outlives the login session,
supervised from inside its job; the backend whose request the options carry writes and submits the job."""

from __future__ import annotations

import json
import sys

from dscluster import console
from dscluster.errors import ExitCode
from dscluster.i18n import tr
from dscluster.resultout import captured, result_stdout
from dscluster.runs.preparing.prepare import dry_run_text
from dscluster.runs.records.request import RunRequest


def submit(opts: RunRequest, *, attach: bool | None, dry_run: bool, as_json: bool = False) -> int:
    """Submit the run's batch job. As `launch` does (commands/launch.py's report_started): detached into a pipe
    (`run=$(dscluster launch ...)`) the run id alone on stdout, --json the run's summary alone, every
    other line on stderr."""
    from dscluster.runs import service

    if dry_run:
        prep = service.prepare_batch(opts)
        print("\n".join(service.batch_preview(prep)))
        print(dry_run_text(prep))
        print(console.next_steps(tr("run it: the same command without --dry-run")))
        return ExitCode.OK
    if attach is None:
        attach = sys.stdout.isatty() and not as_json
    with result_stdout(as_json or (not attach and captured())) as out:
        submitted = service.submit(opts)
        prep, run_id, run_dir, job = submitted.prepared, submitted.run_id, submitted.run_dir, submitted.job_id
        said, watch = prep.record.launch.backend.submitted_lines(run_id, job, prep.record.world_size)
        plain = not attach and captured(out)
        talk = sys.stderr if plain or as_json else sys.stdout
        print(said, file=talk, flush=True)
        if not attach:
            if as_json:
                from dscluster.commands.runs import summary  # noqa: PLC0415

                print(json.dumps(summary(run_dir), indent=2, default=str), file=out, flush=True)
            elif plain:
                print(run_id, file=out, flush=True)
            print(console.next_steps(f"dscluster status {run_id}", f"dscluster logs {run_id} -f", *watch,
                                     f"dscluster stop {run_id}"), file=talk, flush=True)
            return ExitCode.OK
    from dscluster.commands.runview import attach_and_wait

    return attach_and_wait(run_dir)
