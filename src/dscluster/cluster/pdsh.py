"""pdsh through the cluster's ssh_config (pure builders; the ssh wrapper it finds on PATH is ssh.py's).

pdsh's ssh module runs plain `ssh` from PATH (args from PDSH_SSH_ARGS, default `-2 -a -x -l%u %h`,
plus PDSH_SSH_ARGS_APPEND, which DeepSpeed itself rewrites when --ssh_port is given). DeepSpeed's
own pre-launch check (`ssh -o PasswordAuthentication=no HOST hostname`) and its master-address probe
(`ssh HOST hostname -I`) run plain `ssh` too. So the one thing that reaches all of them is PATH: a
per-cluster directory holding an `ssh` wrapper that execs the real ssh with `-F <ssh_config>`.
An MPI launcher's rsh agent finds it the same way (PATH: its backend's transport_env, launcher/backends).
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

