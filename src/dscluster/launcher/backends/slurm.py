"""`slurm`: every attempt is one srun step of the run's allocation (DeepSpeed's SlurmRunner); Slurm, not
dscluster's ssh, reaches the nodes. The supervisor's side (allocation, job watch, time limit, release)
is `runs/slurm_run.SlurmRun`; the Slurm commands and their parsers are `launcher/slurm.py`."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher.backends.base import Backend, NodeTools, ToolCheck

# What srun starts for each rank (it sets RANK etc. from SLURM_PROCID ...).
SRUN_RANK = Path(__file__).parent.parent / "srun_rank.py"


class SlurmBackend(Backend):
    name = "slurm"
    over_ssh = False
    allocates = True
    nodes_python = False
    hooks = "dscluster.runs.slurm_run:SlurmRun"

    def where(self) -> str:
        return tr("under Slurm")

    def check_local(self, local: int | None) -> None:
        if local is not None:
            raise UsageError(tr("--launcher slurm and --local contradict: Slurm starts the ranks on the nodes it "
                                "allocates"),
                             tr("drop --local to run through Slurm, or drop --launcher slurm to run on this machine "
                                "only"), setting="--launcher")

    def check_tools(self, node: NodeTools) -> ToolCheck:
        if node.is_master and not node.tools.get("srun"):
            return ToolCheck(False, tr("srun is not installed on the master"),
                             tr("run from a Slurm login node, or set launcher = \"pdsh\""))
        return ToolCheck(True, self.name)

    def env_values(self, req) -> dict[str, str]:
        # SlurmRunner starts no launch.py: the rendezvous address reaches srun_rank.py this way.
        return {"DSCLUSTER_MASTER_ADDR": req.hosts[0][0]} if req.hosts else {}

    def runner_args(self, req, *, logs: Path, secret_env: Mapping[str, str], add_file: Callable) -> list[str]:
        from dscluster.launcher.slurm import srun_args  # noqa: PLC0415

        argv = []
        argv += self.selection_args(req)
        per_node = {s for _, s in req.hosts}
        if len(per_node) != 1:
            raise ValueError(f"the slurm launcher needs the same slots on every host, not {sorted(per_node)}")
        stem = Path(req.target.program).stem if not req.target.is_module else req.target.program.rsplit(".")[-1]
        # srun's own options (one log per rank, kill the step when a rank fails, the step's name for
        # teardown), then the user's --launcher_args (srun takes the last of a repeated option).
        argv.append("--launcher_args=" + shlex.join([*srun_args(req.run_id, req.attempt, len(req.hosts),
                                                                per_node.pop(), logs, stem),
                                                     *req.launcher_args]))
        return argv

    def program_prefix(self, req) -> list[str]:
        return [str(SRUN_RANK)]  # SlurmRunner ignores --module: the shim runs the module itself
