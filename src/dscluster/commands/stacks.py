"""`dscluster stacks RUN`: every rank's Python stack on every node, grouped (runs/views/stacks.py).

For a run that is still going (a suspected hang), it takes them now and keeps them in the run
directory; for a run that has ended, it shows the ones the supervisor took when the stall detector fired.
"""

from __future__ import annotations

import argparse
import json
import sys

from dscluster import console
from dscluster.errors import ExitCode, RunError
from dscluster.i18n import tr
from dscluster.runs.records import store


def register(sub) -> None:
    p = sub.add_parser("stacks", help=tr("every rank's Python stack on every node, grouped (where a hang is)"),
                       description=tr("Dump every rank's Python stack with py-spy, on every node over the "
                                      "cluster's ssh, and group them: the odd rank out of a hang is named with "
                                      "its file and line. Kept in the run directory (stacks/)."))
    p.add_argument("run", metavar="RUN", help=tr("run id (or a unique prefix)"))
    p.add_argument("--cluster", metavar="SPEC", help=tr("cluster spec whose shared directory holds the runs"))
    p.add_argument("--full", action="store_true", help=tr("print every rank's whole stack, not only the groups"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stacks)


def cmd_stacks(args: argparse.Namespace) -> int:
    from dscluster.commands.runview import find_run
    from dscluster.runs.supervising.nodes import node_links
    from dscluster.runs.views import stacks

    run_dir = find_run(args.run, args.cluster)
    record = store.read_record(run_dir)
    if record.status not in store.ACTIVE:
        saved = stacks.latest_saved(run_dir)
        if saved is None:
            raise RunError(tr("run {id} is {status}: it has no ranks to take stacks of", id=record.id,
                              status=record.status),
                           tr("stacks are taken of a running run; the supervisor takes them itself when the "
                              "stall detector fires"))
        if args.json:
            print(saved.with_suffix(".json").read_text(encoding="utf-8"), end="")
        else:
            print(tr("run {id} is {status}; stacks taken by the supervisor:", id=record.id,
                     status=record.status), file=sys.stderr)
            print(saved.read_text(encoding="utf-8"), end="")
        return ExitCode.OK
    report = stacks.collect(record, node_links(record, own_connection=False))
    try:
        path = stacks.save(run_dir, report)
    except OSError:
        path = None  # a run directory this user cannot write: still show them
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return ExitCode.OK
    print(report.text() if args.full else "\n".join(
        [tr("stacks of {id} ({n} ranks, {s:.1f}s):", id=record.id, n=len(report.ranks), s=report.seconds),
         *(f"  {g.describe(len({r.node for r in report.ranks}) or 1)}" for g in report.groups()),
         *(f"  {console.WARN} {node}: {why}" for node, why in report.node_errors.items())]))
    odd = report.odd_one_out()
    if odd is not None and not args.full:
        print(f"{console.FAIL} " + tr("odd one out: {what}", what=odd.describe(1)))
    if path is not None:
        print(console.next_steps(f"less {path}"))
    return ExitCode.OK if report.ranks else ExitCode.RUN
