"""`dscluster launch --sbatch`: a run that outlives the login session, supervised from inside its job."""

from __future__ import annotations

import dataclasses
import sys

from dscluster import console
from dscluster.errors import ExitCode
from dscluster.i18n import tr
from dscluster.launcher.prepare import LaunchOptions, dry_run_text, prepare
from dscluster.runs import store


def submit(opts: LaunchOptions, *, attach: bool | None, dry_run: bool) -> int:
    from dscluster.launcher.slurm import SlurmAsk
    from dscluster.runs.slurm_run import batch_script_text, submit_run

    opts = dataclasses.replace(opts, launcher="slurm", slurm=opts.slurm or SlurmAsk(nodes=0, tasks_per_node=0))
    prep = prepare(opts)
    prep.record["launch"]["hosts"] = []  # the batch job's own nodes, known once it starts
    prep.record["launch"]["slurm"]["job_id"] = None
    if dry_run:
        print(tr("# the batch script (submitted with sbatch --parsable):"))
        print(batch_script_text(prep.shared, prep.record))
        print(dry_run_text(prep))
        print(console.next_steps(tr("run it: the same command without --dry-run")))
        return ExitCode.OK
    run_id, job = submit_run(prep.shared, prep.record, prep.secrets)
    run_dir = store.run_path(prep.shared, run_id)
    print(tr("{ok} run {id} submitted as Slurm job {job} (world size {n})", ok=console.OK, id=run_id, job=job,
             n=prep.record["world_size"]), flush=True)
    if attach is None:
        attach = sys.stdout.isatty()
    if not attach:
        print(console.next_steps(f"dscluster status {run_id}", f"dscluster logs {run_id} -f", f"squeue -j {job}",
                                 f"dscluster stop {run_id}"))
        return ExitCode.OK
    from dscluster.commands.runs import attach_and_wait

    return attach_and_wait(run_dir)
