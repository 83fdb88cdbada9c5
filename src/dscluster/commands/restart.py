"""`dscluster restart RUN`: a new run of a finished run's program, settings and environment, resuming from its newest
committed checkpoint (runs/service.py restart)."""

from __future__ import annotations

import sys
from pathlib import Path

from dscluster import console
from dscluster.commands.runview import find_run
from dscluster.errors import ExitCode, UsageError
from dscluster.i18n import tr
from dscluster.runs.preparing.shrink import status_lines as shrink_status_lines
from dscluster.runs.records import store
from dscluster.runs.records.owner import check_may_control


def cmd_restart(args) -> int:
    """Restart a finished run as a new one. Into a pipe (`new=$(dscluster restart RUN)`) stdout gets the new run's
    id alone and everything else goes to stderr, as `dscluster launch --detach` does."""
    from dscluster.resultout import captured, result_stdout
    from dscluster.runs import service
    from dscluster.runs.preparing.program import parse_env
    from dscluster.runs.preparing.start import LOST, shown_status

    run_dir = find_run(args.run, args.cluster)
    record = store.read_record(run_dir)
    check_may_control(record, run_dir, "restart")  # before anything is done to it (the reap of a lost run)
    shown = shown_status(record)  # as `status` shows it: a run whose supervisor is gone is lost, not running
    if shown in store.ACTIVE:
        raise UsageError(tr("run {id} is still {status}", id=record.id, status=shown),
                         tr("stop it first: dscluster stop {id}", id=record.id), setting="RUN")
    plain = captured()
    with result_stdout(plain) as out:
        talk = sys.stderr if plain else sys.stdout
        if shown == LOST:
            # Nothing will write its record again (e.g. its disk was full): make sure none of its processes is
            # left on any node, then restart it.
            from dscluster.runs.supervising.nodes import end_masters, remote_reap

            print(tr("run {id} was lost (its supervisor is gone): making sure none of its processes is left",
                     id=record.id), file=talk, flush=True)
            remote_reap(record, list(record.launch.host_names) or ["localhost"])
            end_masters(record)
        new_id = service.restart(run_dir, parse_env(args.env),
                                 hostfile=str(Path(args.hostfile).absolute()) if args.hostfile else None,
                                 local=args.local, hosts=args.hosts)
        print(f"{console.OK} " + tr("run {new} started from {old}'s program, settings and checkpoints", new=new_id,
                                    old=record.id), file=talk, flush=True)
        new_dir = run_dir.parent / new_id  # the batch the new run trains with, when its world size differs
        for line in shrink_status_lines(store.read_record(new_dir)) if new_dir.is_dir() else ():
            print(f"  {line}", file=talk)
        print(console.next_steps(f"dscluster logs {new_id} -f", f"dscluster status {new_id}",
                                 f"dscluster stop {new_id}"), file=talk, flush=True)
        if plain:
            print(new_id, file=out, flush=True)
    return ExitCode.OK
