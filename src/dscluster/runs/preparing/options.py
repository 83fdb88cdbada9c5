"""What `dscluster launch` (and every other way to start a run) asks for: `LaunchOptions`, the supervision
defaults, and the check of the supervision settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher.runnerflags import (
    RunnerFlags,
)

DEFAULTS = {
    "max_restarts": 2,
    "restart_wait": 120.0,  # before a restart: how long to wait for a lost node to answer again
    "stall_timeout": 900.0,  # JIT builds can be silent for minutes; a hung collective lasts forever
    # A node silent this long is lost on its silence alone; a pause of 1 s that a probe of its sshd confirms
    # is a loss at once (runs/supervising/detect.py). Plain DeepSpeed: ~17 min.
    "heartbeat_timeout": 10.0,
    "ping_timeout": 3.0,  # a watchdog that hears no ping (every 0.25 s, runs/supervising/channel.Pinger) this long reaps its node
    "connect_timeout": 30.0,
    "grace": 1.0,  # SIGTERM -> SIGKILL on failure teardown: the attempt is lost anyway
    "stop_grace": 10.0,  # on `stop`: time for ranks to exit cleanly
}


@dataclass
class LaunchOptions:
    command: list[str]  # [program, args...]
    module: bool = False
    cluster: str | None = None
    hostfile: str | None = None
    local: int | None = None  # N processes on this machine, no ssh
    launcher: str | None = None
    name: str | None = None
    env: list[str] = field(default_factory=list)
    max_restarts: int = DEFAULTS["max_restarts"]
    stall_timeout: float = DEFAULTS["stall_timeout"]
    heartbeat_timeout: float = DEFAULTS["heartbeat_timeout"]
    restart_wait: float = DEFAULTS["restart_wait"]
    skip_doctor: bool = False
    cwd: str | None = None
    # The scheduler's request the options give (its backend's own type: Backend.request builds on it); None:
    # none given (the spec's nodes and slots then).
    scheduler: Any | None = None
    cluster_spec: Any | None = None  # cluster.spec.ClusterSpec already resolved (a restart's, as recorded)
    runner: RunnerFlags = field(default_factory=RunnerFlags)  # DeepSpeed's own runner flags, as written
    allow_shrink: bool = False  # a node lost past restart_wait: continue on the nodes that remain
    # Leave out the nodes doctor's last verdict or the cluster's last failed run point to (runs/preparing/exclude.py);
    # with allow_shrink, the supervisor leaves out a node an attempt failed on before restarting.
    exclude_unhealthy: bool = False
    # The batch (dscluster.batchplan.Batch) of the run this one continues (a restart): on another world
    # size the ranks get a ds_config whose batch keys keep its global batch where any can.
    keep_batch: Any | None = None
    # Inline DeepSpeed configs a dry run names by the path a real run writes them to, without writing them
    # (a dry run writes nothing): path -> config, read here instead of the file.
    unwritten_configs: Mapping[str, Any] | None = None
    # The run's id, chosen before `prepare` when a file the ranks read goes into the run's own directory
    # (runs.service.options: an inline config); None: prepare names the run.
    run_id: str | None = None
    # GPUs another run holds: queue the run until they are free (status "queued"), instead of refusing it.
    wait: bool = False
    # Take no GPU leases: run alongside other runs on the same GPUs (small jobs that fit together, CPU runs).
    share_gpus: bool = False


def check_supervision(opts: LaunchOptions) -> None:
    """Restart and timeout settings: a negative value is a typo, never "unlimited"."""
    if int(opts.max_restarts) < 0:
        raise UsageError(tr("--max-restarts must be 0 or more (got {n})", n=opts.max_restarts),
                         tr("--max-restarts 0 never restarts; the default is {n}", n=DEFAULTS["max_restarts"]),
                         setting="max_restarts")
    for flag, value in (("--restart-wait", opts.restart_wait), ("--stall-timeout", opts.stall_timeout),
                        ("--heartbeat-timeout", opts.heartbeat_timeout)):
        if value is not None and float(value) < 0:
            raise UsageError(tr("{flag} must be 0 or more seconds (got {value})", flag=flag, value=value),
                             tr("give a number of seconds, e.g. {flag} 60", flag=flag), setting=flag.lstrip("-"))
