"""`openmpi`: the runner starts every rank through mpirun (its rsh agent uses the cluster's ssh settings)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher.backends.base import Backend, NodeTools, ToolCheck, option_unknown


class OpenMPIBackend(Backend):
    name = "openmpi"
    node_tools = ("mpirun",)
    host_packages = ("openmpi-bin",)
    node_packages = ("openmpi-bin", "libopenmpi-dev")  # -dev: the image builds mpi4py against it
    programs = ("mpirun", "prterun")
    selects_slots = False
    # mpirun's words for a rank that failed ("... on node N exited on signal 9 (Killed)").
    failure_lines = (r"exited on signal", r"Primary job\s+terminated normally, but \d+ process returned",
                     r"mpirun noticed that process rank")
    # mpirun's (and its mpiexec's, PRRTE's prterun's) words for an option it does not know: Open MPI and MPICH
    # spell many options apart, and Open MPI 5 renamed some of 4's.
    signatures = (option_unknown(r"mpirun|mpiexec|prterun"),)

    def check_selection(self, include: str, setting: str) -> None:
        # DeepSpeed's OpenMPI runner refuses --include/--exclude, but only once it has started; whole
        # hosts are left out of the run's hostfile instead, which mpirun reads.
        raise UsageError(tr("--launcher openmpi cannot select single slots of a host ({spec}): DeepSpeed's "
                            "OpenMPI runner refuses --include/--exclude (mpirun takes whole hosts from the "
                            "hostfile)", spec=include),
                         tr("select whole hosts (--include node1@node2, or --exclude node3), or use the pdsh "
                            "launcher"), setting=setting)

    def check_tools(self, node: NodeTools) -> ToolCheck:
        if not node.tools.get("mpirun"):
            return ToolCheck(False, tr("mpirun is not installed"),
                             tr("apt-get install openmpi-bin on {node} (every node needs it)", node=node.node))
        if not node.packages.get("mpi4py"):
            return ToolCheck(False, tr("mpi4py is missing (DeepSpeed's openmpi launcher imports it on every rank)"),
                             tr("pip install mpi4py into the training Python on {node}", node=node.node))
        return ToolCheck(True, tr("mpirun {path}, mpi4py", path=node.tools["mpirun"]))

    def transport_env(self, spec, no_mux: tuple[str, ...]) -> dict[str, str]:
        env = dict(openmpi_env(spec))
        env["OMPI_MCA_plm_rsh_args"] = " ".join(no_mux)
        # mpirun starts every node's daemon itself: with tree spawn the daemons would start each other
        # through the rsh agent, which lives in the controller's private cluster state directory.
        env["OMPI_MCA_plm_rsh_no_tree_spawn"] = "1"
        return env

    def runner_args(self, req, *, logs: Path, secret_env: Mapping[str, str], add_file: Callable) -> list[str]:
        argv = []
        argv += self.selection_args(req)
        mpi_args = []
        if req.is_root:
            mpi_args.append("--allow-run-as-root")
        if req.network_interface and req.network_interface != "eth0":
            # DeepSpeed's openmpi runner already passes `--mca btl_tcp_if_include eth0`.
            mpi_args += ["--mca", "btl_tcp_if_include", req.network_interface]
        for k in secret_env:
            mpi_args += ["-x", k]  # name only: mpirun copies the value from its environment
        mpi_args += list(req.launcher_args)
        if mpi_args:
            argv.append("--launcher_args=" + shlex.join(mpi_args))
        return argv


def mpirun_rsh_agent(spec) -> str:
    """The wrapper's absolute path (what `ssh` on PATH resolves to with `openmpi_env`).

    Do not pass it as `--mca plm_rsh_agent`: mpirun forwards MCA parameters to every orted, and an
    orted (running as the node user) cannot read the controller's 0700 state dir, so it aborts
    ("plm_rsh_component.c(335) Not found"). `openmpi_args` names plain `ssh` instead.
    """
    from dscluster.cluster.ssh import ssh_wrapper_dir  # noqa: PLC0415

    return str(ssh_wrapper_dir(spec) / "ssh")


def openmpi_args(spec) -> list[str]:
    """mpirun arguments: the rsh agent is `ssh` from PATH, which `openmpi_env` makes the cluster
    wrapper for mpirun itself, while the orteds it starts find their own node's plain ssh."""
    return ["--mca", "plm_rsh_agent", "ssh"]


def openmpi_env(spec, path: str | None = None) -> dict[str, str]:
    """Env that makes mpirun start its daemons through the cluster's ssh_config (PATH only; see
    `mpirun_rsh_agent` for why not OMPI_MCA_plm_rsh_agent). DeepSpeed's openmpi runner builds the
    mpirun argv itself, so this is the way in for it."""
    from dscluster.cluster.pdsh import path_with_wrapper  # noqa: PLC0415

    return {"PATH": path_with_wrapper(spec, path)}
