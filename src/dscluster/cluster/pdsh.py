"""pdsh and OpenMPI through the cluster's ssh_config (pure builders; the ssh wrapper they find on PATH is ssh.py's).

pdsh's ssh module runs plain `ssh` from PATH (args from PDSH_SSH_ARGS, default `-2 -a -x -l%u %h`,
plus PDSH_SSH_ARGS_APPEND, which DeepSpeed itself rewrites when --ssh_port is given). DeepSpeed's
own pre-launch check (`ssh -o PasswordAuthentication=no HOST hostname`) and its master-address probe
(`ssh HOST hostname -I`) run plain `ssh` too. So the one thing that reaches all of them is PATH: a
per-cluster directory holding an `ssh` wrapper that execs the real ssh with `-F <ssh_config>`.
OpenMPI's rsh launcher finds it the same way (PATH; see `openmpi_env` for why not an MCA parameter).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from dscluster.cluster.spec import ClusterSpec
from dscluster.cluster.ssh import ssh_wrapper_dir  # the wrapper is written with the ssh files (ensure_ssh_files)

PDSH_FANOUT = 1024  # DeepSpeed's PDSH_MAX_FAN_OUT


def path_with_wrapper(spec: ClusterSpec, path: str | None = None) -> str:
    base = os.environ.get("PATH", os.defpath) if path is None else path
    wrapper = str(ssh_wrapper_dir(spec))
    rest = [p for p in base.split(os.pathsep) if p and p != wrapper]
    return os.pathsep.join([wrapper] + rest)


def pdsh_env(spec: ClusterSpec, path: str | None = None) -> dict[str, str]:
    """Env that makes pdsh (and DeepSpeed's ssh checks) use the cluster's ssh_config.

    `ssh.ensure_ssh_files(spec)` (or `write_ssh_wrapper`) must have run once so the wrapper exists.
    """
    return {"PATH": path_with_wrapper(spec, path), "PDSH_RCMD_TYPE": "ssh"}


def pdsh_argv(spec: ClusterSpec, command: Sequence[str], *, hosts: Sequence[str] | None = None,
              connect_timeout: int = 10, command_timeout: int | None = None,
              path: str | None = None) -> tuple[list[str], dict[str, str]]:
    """(argv, env) for `pdsh` over the cluster's nodes (spec order), running `command` on each."""
    targets = list(hosts) if hosts is not None else [n.name for n in spec.nodes]
    argv = ["pdsh", "-S", "-R", "ssh", "-f", str(PDSH_FANOUT), "-t", str(connect_timeout)]
    if command_timeout:
        argv += ["-u", str(command_timeout)]
    argv += ["-w", ",".join(targets), shlex.join(command)]
    return argv, pdsh_env(spec, path)


def mpirun_rsh_agent(spec: ClusterSpec) -> str:
    """The wrapper's absolute path (what `ssh` on PATH resolves to with `openmpi_env`).

    Do not pass it as `--mca plm_rsh_agent`: mpirun forwards MCA parameters to every orted, and an
    orted (running as the node user) cannot read the controller's 0700 state dir, so it aborts
    ("plm_rsh_component.c(335) Not found"). `openmpi_args` names plain `ssh` instead.
    """
    return str(ssh_wrapper_dir(spec) / "ssh")


def openmpi_args(spec: ClusterSpec) -> list[str]:
    """mpirun arguments: the rsh agent is `ssh` from PATH, which `openmpi_env` makes the cluster
    wrapper for mpirun itself, while the orteds it starts find their own node's plain ssh."""
    return ["--mca", "plm_rsh_agent", "ssh"]


def openmpi_env(spec: ClusterSpec, path: str | None = None) -> dict[str, str]:
    """Env that makes mpirun start its daemons through the cluster's ssh_config (PATH only; see
    `mpirun_rsh_agent` for why not OMPI_MCA_plm_rsh_agent). DeepSpeed's openmpi runner builds the
    mpirun argv itself, so this is the way in for it."""
    return {"PATH": path_with_wrapper(spec, path)}
