"""`dscluster launch --sbatch`: a run that outlives the login session, supervised from inside its job."""

from __future__ import annotations

import sys

from dscluster import console
from dscluster.errors import ExitCode
from dscluster.i18n import tr
from dscluster.runs.preparing.options import LaunchOptions
from dscluster.runs.preparing.prepare import dry_run_text


def submit(opts: LaunchOptions, *, attach: bool | None, dry_run: bool) -> int:
    from dscluster.runs import service
    from dscluster.runs.supervising.slurm_run import batch_script_text

    if dry_run:
        prep = service.prepare_batch(opts)
        print(tr("# the batch script (submitted with sbatch --parsable):"))
        print(batch_script_text(prep.shared, prep.record))
        print(dry_run_text(prep))
        print(console.next_steps(tr("run it: the same command without --dry-run")))
        return ExitCode.OK
    submitted = service.submit(opts)
    prep, run_id, run_dir, job = submitted.prepared, submitted.run_id, submitted.run_dir, submitted.job_id
    print(tr("{ok} run {id} submitted as Slurm job {job} (world size {n})", ok=console.OK, id=run_id, job=job,
             n=prep.record.world_size), flush=True)
    if attach is None:
        attach = sys.stdout.isatty()
    if not attach:
        print(console.next_steps(f"dscluster status {run_id}", f"dscluster logs {run_id} -f", f"squeue -j {job}",
                                 f"dscluster stop {run_id}"))
        return ExitCode.OK
    from dscluster.commands.runview import attach_and_wait

    return attach_and_wait(run_dir)
