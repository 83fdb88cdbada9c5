"""What every way to start a run asks for: one typed `RunRequest`, made of groups, with every default here.

`dscluster launch` and `dscluster demo` (their parsed arguments), the Python API (`dscluster.launch`), the
JupyterLab panel's form and `dscluster restart` all build the same `RunRequest` with `RunRequest.of(...)`,
which hands each named setting to the group that owns it; the layers below take the group they need
(`prepare` the program, `target.place` the place, the runner flags and the scheduler's request, the
supervisor `supervision`) instead of copying settings field by field. The run record keeps `supervision`
as given (runs/records/record.py `LaunchSpec`); what prepare resolves of the rest (the program's path and
cwd, the hosts, the environment without its secrets) is the record's own.

Adding an option: a field in its group here (its default with it), the flag that sets it (the CLI's
argparse `dest` is the field's name, so `request_from_args` passes it on), and the code that reads it.

The groups:
- `Program`: what the ranks run, where, with what environment and DeepSpeed config;
- `Place`: where it runs (a cluster spec, a hostfile, this machine) and which nodes;
- `Supervision`: restarts, timeouts, shrinking (the supervisor's policy);
- `Gpus`: what to do about other runs' GPU leases;
- `Carried`: what the service or a restart carries over (never set by a view).
DeepSpeed's own runner flags are `launcher.runnerflags.RunnerFlags`, and the scheduler's request its
backend's own type (opaque here); both are groups of the request as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher.runnerflags import RunnerFlags


@dataclass(frozen=True)
class Program:
    """What the ranks run: a script or module (`module`) with its arguments, in `cwd` (None: here), with
    `env` ("K=V", or "K": its value from the launching environment) and an inline DeepSpeed `config` or a
    `config_path` passed as --deepspeed_config unless the args name one (runs/service.py `resolved`)."""

    program: str = ""
    module: bool = False
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[str, ...] = ()
    name: str | None = None  # the run's name (its id starts with it); None: the script's
    config: Mapping[str, Any] | None = None
    config_path: str | None = None


@dataclass(frozen=True)
class Place:
    """Where the run runs: a cluster spec or hostfile (`cluster`, `hostfile`; None: the default one), or
    `local` processes on this machine, no ssh. `here_by_default` (the API's and the panel's): this machine
    with `local` (1 by default) processes when no cluster is given or found."""

    cluster: str | None = None
    hostfile: str | None = None
    local: int | None = None
    here_by_default: bool = False
    launcher: str | None = None  # None: the spec's
    cluster_spec: Any | None = None  # cluster.spec.ClusterSpec already resolved (a restart's, as recorded)
    # Leave out the nodes doctor's last verdict or the cluster's last failed run point to (runs/preparing/exclude.py);
    # with allow_shrink, the supervisor leaves out a node an attempt failed on before restarting.
    exclude_unhealthy: bool = False
    skip_doctor: bool = False  # no pre-flight checks on the nodes


@dataclass(frozen=True)
class Supervision:
    """The supervisor's policy for the run (recorded as given; runs/supervising/supervisor.py reads it)."""

    max_restarts: int = 2
    stall_timeout: float = 900.0  # JIT builds can be silent for minutes; a hung collective lasts forever
    # A node silent this long is lost on its silence alone; a pause of 1 s that a probe of its sshd confirms
    # is a loss at once (runs/supervising/detect.py). Plain DeepSpeed: ~17 min.
    heartbeat_timeout: float = 10.0
    restart_wait: float = 120.0  # before a restart: how long to wait for a lost node to answer again
    ping_timeout: float = 3.0  # a watchdog without a ping (every 0.25 s, supervising/channel.Pinger) this long reaps
    connect_timeout: float = 30.0
    grace: float = 1.0  # SIGTERM -> SIGKILL on failure teardown: the attempt is lost anyway
    stop_grace: float = 10.0  # on `stop`: time for ranks to exit cleanly
    allow_shrink: bool = False  # a node lost past restart_wait: continue on the nodes that remain


@dataclass(frozen=True)
class Gpus:
    """Other runs' GPU leases (runs/leases/leasing.py)."""

    wait: bool = False  # GPUs another run holds: queue the run until they are free (status "queued")
    share_gpus: bool = False  # take no GPU leases: run alongside other runs on the same GPUs


@dataclass(frozen=True)
class Carried:
    """What the service or a restart carries into the launch; no view sets these."""

    # The batch (dscluster.batchplan.Batch) of the run this one continues (a restart): on another world
    # size the ranks get a ds_config whose batch keys keep its global batch where any can.
    keep_batch: Any | None = None
    # The run's id, chosen before `prepare` when a file the ranks read goes into the run's own directory
    # (an inline config); None: prepare names the run.
    run_id: str | None = None
    # Inline DeepSpeed configs a dry run (or the run's own directory, not made yet) names by path without
    # writing them: path -> config, read here instead of the file.
    unwritten_configs: Mapping[str, Any] | None = None


_GROUPS = {"program": Program, "place": Place, "supervision": Supervision, "gpus": Gpus, "carried": Carried}
FIELDS = {f.name: group for group, cls in _GROUPS.items() for f in dataclasses.fields(cls)}  # setting -> group
DEFAULTS = {f.name: f.default for f in dataclasses.fields(Supervision)}


@dataclass(frozen=True)
class RunRequest:
    """One launch, as asked for: its groups (see the module's docstring)."""

    program: Program
    place: Place = Place()
    supervision: Supervision = Supervision()
    gpus: Gpus = Gpus()
    runner: RunnerFlags = field(default_factory=RunnerFlags)  # DeepSpeed's own runner flags, as written
    # The scheduler's request the options give (its backend's own type: Backend.request builds on it); None:
    # none given (the spec's nodes and slots then).
    scheduler: Any | None = None
    carried: Carried = Carried()

    @classmethod
    def of(cls, *, command: list[str] | None = None, runner: RunnerFlags | None = None, scheduler: Any = None,
           **settings: Any) -> RunRequest:
        """The request of named settings, each handed to the group that owns it; None (or leaving it out)
        is its default. `command`: [program, *args]."""
        unknown = sorted(k for k in settings if k not in FIELDS)
        if unknown:
            raise TypeError(f"unknown launch setting(s): {', '.join(unknown)}")
        if command is not None:
            settings = {"program": command[0] if command else "", "args": command[1:], **settings}
        groups: dict[str, dict[str, Any]] = {g: {} for g in _GROUPS}
        for key, value in settings.items():
            if value is not None:
                groups[FIELDS[key]][key] = tuple(value) if key in ("args", "env") else value
        return cls(**{g: _GROUPS[g](**values) for g, values in groups.items()},
                   runner=runner or RunnerFlags(), scheduler=scheduler)

    def but(self, **settings: Any) -> RunRequest:
        """The request with named settings changed (each in its group), e.g. `req.but(local=2)`."""
        groups: dict[str, dict[str, Any]] = {}
        for key, value in settings.items():
            groups.setdefault(FIELDS[key], {})[key] = value
        return dataclasses.replace(self, **{g: dataclasses.replace(getattr(self, g), **values)
                                            for g, values in groups.items()})

    @property
    def command(self) -> list[str]:
        return [self.program.program, *self.program.args]


def check_supervision(sup: Supervision) -> None:
    """Restart and timeout settings: a negative value is a typo, never "unlimited"."""
    if int(sup.max_restarts) < 0:
        raise UsageError(tr("--max-restarts must be 0 or more (got {n})", n=sup.max_restarts),
                         tr("--max-restarts 0 never restarts; the default is {n}", n=DEFAULTS["max_restarts"]),
                         setting="max_restarts")
    for flag, value in (("--restart-wait", sup.restart_wait), ("--stall-timeout", sup.stall_timeout),
                        ("--heartbeat-timeout", sup.heartbeat_timeout)):
        if value is not None and float(value) < 0:
            raise UsageError(tr("{flag} must be 0 or more seconds (got {value})", flag=flag, value=value),
                             tr("give a number of seconds, e.g. {flag} 60", flag=flag), setting=flag.lstrip("-"))
