"""`local`: this machine only (`dscluster launch --local N`); no hostfile, no ssh. The ranks start from
launcher/locallaunch.py (DeepSpeed's launch.py contract, without importing torch first), see plan.local_argv."""

from __future__ import annotations

from dscluster.i18n import tr
from dscluster.launcher.backends.base import Backend


class LocalBackend(Backend):
    name = "local"
    in_spec = False
    over_ssh = False
    nodes_python = False
    reports_rank_exits = True  # locallaunch.py, as launch.py, prints one "Process N exits successfully" per rank
    on_this_machine = True

    def where(self) -> str:
        return tr("on this machine only")
