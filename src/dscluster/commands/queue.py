"""`dscluster queue`: the GPUs runs hold (GPU leases, runs/leases/leasing.py) and the runs waiting for them (`--wait`)."""

from __future__ import annotations

import json

from dscluster import console
from dscluster.commands.runview import add_cluster, shared_dirs
from dscluster.errors import ExitCode
from dscluster.i18n import tr
from dscluster.runs.leases import leasing


def register(sub) -> None:
    p = sub.add_parser("queue", help=tr("the GPUs runs hold, and the runs queued for them (launch --wait)"))
    add_cluster(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_queue)


def _gpus(claim) -> str:
    return ", ".join(str(g) for g in claim.gpus)


def cmd_queue(args) -> int:
    shown = leasing.board(leasing.places(shared_dirs(args.cluster)))
    if args.json:
        print(json.dumps(shown.to_json(), indent=2))
        return ExitCode.OK
    if shown.held:
        print(tr("GPUs held:"))
        print(console.table([tr("run"), tr("owner"), tr("GPUs"), tr("since"), tr("until"), tr("supervisor")],
                            [[c.run_id, c.owner, _gpus(c), leasing.shown_time(c.since), leasing.shown_time(c.until),
                              f"{c.holder.host}:{c.holder.pid}"] for c in shown.held]))
    else:
        print(tr("no run holds GPUs"))
    if shown.queue:
        print(tr("queued (first in, first out):"))
        print(console.table([tr("#"), tr("run"), tr("owner"), tr("GPUs wanted"), tr("waiting since"), tr("behind")],
                            [[str(w.position), w.claim.run_id, w.claim.owner, _gpus(w.claim),
                              leasing.shown_time(w.claim.queued),
                              ", ".join(f"{c.run_id} ({c.owner})" for c in w.behind) or "-"] for w in shown.queue]))
    else:
        print(tr("no run is queued"))
    print(console.next_steps("dscluster launch --wait ...", "dscluster stop RUN"))
    return ExitCode.OK
