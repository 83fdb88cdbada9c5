"""pdsh and OpenMPI through the cluster's ssh_config (pure builders + one generated wrapper).

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
import shutil
from collections.abc import Sequence
from pathlib import Path

from dscluster.cluster.identity import cluster_state_dir
from dscluster.cluster.spec import ClusterSpec
from dscluster.cluster.ssh import ssh_config_path
from dscluster.errors import ConfigError
from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr

PDSH_FANOUT = 1024  # DeepSpeed's PDSH_MAX_FAN_OUT


def ssh_wrapper_dir(spec: ClusterSpec) -> Path:
    return cluster_state_dir(spec, create=False) / "bin"


def render_ssh_wrapper(spec: ClusterSpec, real_ssh: str) -> str:
    return ("#!/bin/sh\n"
            f"# dscluster: every ssh (pdsh, DeepSpeed's checks, mpirun) uses cluster {spec.name!r}'s config.\n"
            f"exec {shlex.quote(real_ssh)} -F {shlex.quote(str(ssh_config_path(spec)))} \"$@\"\n")


def write_ssh_wrapper(spec: ClusterSpec) -> Path:
    """Create <state>/bin/ssh (0755) and return the directory to put first on PATH."""
    folder = ssh_wrapper_dir(spec)
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "ssh"
    search = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep)
                             if p and Path(p).resolve() != folder.resolve())
    real = shutil.which("ssh", path=search)
    if not real:
        raise ConfigError(tr("the ssh client is not installed"), tr("apt-get install openssh-client"))
    text = render_ssh_wrapper(spec, real)
    if not wrapper.exists() or wrapper.read_text(encoding="utf-8") != text:
        atomic_write_text(wrapper, text, mode=0o755)
    return folder


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
