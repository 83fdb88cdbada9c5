"""`dscluster doctor --local`: the node checks of this machine alone (one GPU server, `launch --local N`).

The same probe and the same checks as on a cluster, through a LocalRunner on a one-node spec of this
machine with a slot per local GPU; the checks that only mean something between nodes (ssh, reaching the
nodes' sshd, name resolution, the pdsh launcher, the interface to the master, clocks) are reported as
not needed. `--collective` runs the real all-reduce across the local GPUs.
"""

from __future__ import annotations

import getpass
import shutil
import subprocess
from dataclasses import replace

from dscluster import paths
from dscluster.doctor.model import Report
from dscluster.i18n import tr

THIS_MACHINE = "localhost"
CLUSTER_ONLY = ("ssh", "reach", "names", "launcher", "iface", "clock")


def local_gpu_count() -> int:
    """GPUs on this machine as nvidia-smi lists them (no torch import, no CUDA context); 0 without any."""
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        res = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in res.stdout.splitlines() if line.startswith("GPU "))


def this_machine_spec(slots: int | None = None):
    from dscluster.cluster.spec import ClusterSpec, NodeSpec

    n = slots or local_gpu_count() or 1
    return ClusterSpec(name="this-machine", nodes=(NodeSpec("127.0.0.1", n, THIS_MACHINE),),
                       shared_dir=paths.local_shared(), ssh_user=getpass.getuser())


def run_local_doctor(*, fast: bool = False, collective: bool = False, master_port: int | None = None,
                     collective_mb: float | None = None, slots: int | None = None) -> Report:
    from dscluster.cluster.runner import LocalRunner
    from dscluster.doctor.engine import DEFAULT_MASTER_PORT, run_doctor

    spec = this_machine_spec(slots)
    spec.shared_dir.mkdir(parents=True, exist_ok=True)  # where `launch --local` keeps its runs
    report = run_doctor(spec, fast=fast, collective=collective,
                        master_port=master_port or DEFAULT_MASTER_PORT, runners=[LocalRunner(THIS_MACHINE)],
                        collective_mb=collective_mb)
    results = [replace(r, ok=True, skipped=True, severity="info", fix="",
                       finding=tr("not needed on one machine")) if r.check in CLUSTER_ONLY else r
               for r in report.results]
    return replace(report, results=results)
