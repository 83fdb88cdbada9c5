"""Doctor's fast checks before a launch: a sick node refuses the launch before anything starts anywhere."""

from __future__ import annotations

from dscluster.errors import ClusterError
from dscluster.i18n import tr


def run_fast_checks(spec) -> None:
    from dscluster.doctor import run_doctor

    report = run_doctor(spec, fast=True)
    if report.ok:
        return
    lines = [f"{r.node}: {r.check}: {r.finding}" + (f" ({tr('fix')}: {r.fix})" if r.fix else "")
             for r in report.failures]
    first = report.failures[0]
    raise ClusterError(tr("the cluster is not ready to launch:\n  {lines}", lines="\n  ".join(lines)),
                       first.fix or tr("run: dscluster doctor"), node=first.node)
