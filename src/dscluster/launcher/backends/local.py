"""`local`: this machine only (`dscluster launch --local N`); no hostfile, no ssh. The ranks start from
launcher/locallaunch.py (DeepSpeed's launch.py contract, without importing torch first): `local_command` below is its whole command line."""

from __future__ import annotations

from pathlib import Path

from dscluster.i18n import tr
from dscluster.launcher.backends.base import Backend
from dscluster.launcher.runnerflags import parse_node_specs
from dscluster.safepython import module_argv


class LocalBackend(Backend):
    name = "local"
    in_spec = False
    over_ssh = False
    nodes_python = False
    reports_rank_exits = True  # locallaunch.py, as launch.py, prints one "Process N exits successfully" per rank
    on_this_machine = True

    def where(self) -> str:
        return tr("on this machine only")

    def command(self, req, parts) -> list[str]:
        return local_command(req, parts)


# Runner flags that need DeepSpeed's own launch.py on this machine (its numactl core binding).
_NEEDS_DS_LAUNCH = ("--bind_cores_to_rank", "--bind_core_list")


def local_devices(req) -> tuple[int, ...]:
    """The device indices of a run on this machine: --include localhost:1,3's, else 0..n-1 (DeepSpeed's
    runner with --num_gpus N, which replaces a CUDA_VISIBLE_DEVICES of the launching environment too)."""
    if req.include:
        (slots,) = parse_node_specs(req.include, "--include").values()  # one host: this machine
        if slots is not None:
            return slots
    return tuple(range(req.local_procs))


def local_argv(req, logs: Path) -> list[str]:
    """A run on this machine: dscluster's torch-free rank starter (launcher/locallaunch.py: the work of
    DeepSpeed's runner and launch.py on one machine, without their two torch imports), or DeepSpeed's
    runner when a flag needs DeepSpeed's own launch.py."""
    if any(f.split("=", 1)[0] in _NEEDS_DS_LAUNCH for f in req.runner.passed):
        select = [f"--include={req.include}"] if req.include else [f"--num_gpus={req.local_procs}"]
        from dscluster.launcher.plan import runner_argv  # noqa: PLC0415 - plan imports this package

        return [*runner_argv(req), *select, f"--master_port={req.master_port}", f"--enable_each_rank_log={logs}"]
    devices = ",".join(str(d) for d in local_devices(req))
    # The ranks' own bytecode cache where torch's would be recompiled at every start (see locallaunch.py),
    # unless the user's --env decides about bytecode itself.
    cache = [] if {"PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"} & set(req.user_env) else ["--cache_bytecode"]
    return [*module_argv(req.python, "dscluster.launcher.locallaunch", unbuffered=True), f"--devices={devices}",
            f"--master_port={req.master_port}", f"--enable_each_rank_log={logs}", *cache]


def local_command(req, parts) -> list[str]:
    """The ranks on this machine (the local backend's command, and any backend's without hosts)."""
    from dscluster.launcher.plan import program_argv  # noqa: PLC0415 - plan imports this package

    return local_argv(req, parts.logs) + program_argv(req, [], bool(parts.secret_env))
