"""The one interface every launcher backend implements (as DeepSpeed's `multinode_runner.py`: one base
class, one class per backend).

A backend is how a run's ranks are started on its nodes: DeepSpeed's runner on this machine only
(`local`), over pdsh and ssh (`pdsh`), through mpirun (`openmpi`), or as a Slurm step (`slurm`). It says:

- what it is: its `name`, whether a cluster spec may name it (`in_spec`), whether dscluster reaches the
  nodes itself over ssh (`over_ssh`: doctor on the nodes, a watchdog per node, teardown by ssh,
  `--exclude-unhealthy`, shrinking), whether a scheduler hands out the nodes (`allocates`);
- how its runs behave: whether the nodes run the spec's own interpreter (`nodes_python`), whether
  DeepSpeed's launch.py reports every rank's exit in the runner's output (`reports_rank_exits`),
  whether every node's launch.py can be pre-warmed for a restart (`warm_launch`: the supervisor, for
  heal-to-running within seconds),
  whether single devices of a host may be selected (`selects_slots`);
- validation of the options against the spec (`check_local`, `check_selection`);
- a scheduler's own request, for a backend that `allocates` (`request`, `check_request`,
  `allocated_hosts`, `request_record`, `recorded_request`, `allocation_args`, `allocation_preview`):
  built from the options, recorded in run.json, read back by a restart, shown by a dry run; the
  defaults ask nothing;
- the transport environment that makes it use the cluster's ssh settings (`transport_env`);
- its pre-flight check of the tools it needs on a node (`check_tools`, run by `dscluster doctor`; doctor's
  probe looks for the programs named in `node_tools` on every node);
- the Debian packages its runs on the simulated cluster need on the test machine, which launches them and
  hosts every simulated node (`host_packages`: `scripts/setup.sh test` installs every registered backend's,
  through `python3 -m dscluster.launcher.backends.packages`), and those the node image installs for it
  (`node_packages`: `dscluster image build` passes every registered backend's to docker/Dockerfile);
- its own options (`launch_options`, `doctor_options`: `Option`s the views turn into argparse groups), the
  scheduler request they give (`request_from`, `owns`, `refuse_request`), a batch job (`batch_requested`,
  `batch_record`, `batch_preview`, `submit_batch`, `submitted_lines`), its own doctor checks (`doctor`), its
  job as the views show it (`job_summary`, `job_brief`, `job_line`);
- the pure plan of an attempt: its whole command line (`command`; by default DeepSpeed's runner with the
  backend's `runner_args` after the common flags and its shim, `program_prefix`, before the program) and its
  environment values (`env_values`);
- what its launcher prints, read by the generic log readers through the registry: the lines that mean a
  rank failed whatever the exit code (`failure_lines`: runs/supervising/detect.py), its words for a rank a signal
  ended (`signal_line`: rankerror.py), the label it puts before each rank's line (`rank_label`: logtext.py),
  its programs' own lines (`programs`: logtext.py), the explainer's signatures of what it prints
  (`signatures`: signatures.py);
- the supervisor's hooks (`hooks`: allocate, watch, cancel an attempt, explain a time-out, release, a
  forced stop), named as `module:Class` so that they load only in the supervisor; None means
  `runs.supervising.hooks.NoHooks`, whose every hook does nothing. A hooks class is built with a
  `runs.supervising.hooks.HookContext` (the run's record as it stands, `save`, `event`, `log`), never the
  supervisor.

No module outside this package names a backend (tests/unit/test_layers.py): the rest ask the registry.

Adding a backend is one module in this package with its class added to the tuple that `__init__.py` registers in
`_BACKENDS`, its translations in `locale/<lang>/NAME.json` of this package (dscluster.i18n merges them), plus
its tests; `tests/unit/test_backends.py` holds every registered backend to this contract.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from dscluster.sigtypes import Signature, sig

if TYPE_CHECKING:
    from dscluster.launcher.plan import CommandParts, LaunchRequest, PlannedFile


def option_unknown(programs: str) -> Signature:
    """The explainer's `launcher-option-unknown` for a backend's launcher programs (`programs`: a regular
    expression of their names): the launcher's own words for an option it does not know, as getopt and the
    launchers' own parsers print them ("sbatch: unrecognized option '--workdir=...'", "mpirun: Error: unknown
    option", "pdsh: invalid option -- 'x'"), a Windows client's `.exe` name included. Often an option another
    version or implementation spells differently (Slurm 17.11 renamed sbatch's --workdir to --chdir)."""
    return sig("launcher-option-unknown", rf"\b(?:{programs})(?:\.exe)?: (?:error: )?"
               r"(?:unrecogni[sz]ed|unknown|invalid|illegal) option\b",
               "The launcher does not know an option of the command line: a typo, or an option that another version "
               "or implementation of it spells differently.",
               "Check the option against this launcher's --help and --version and use the spelling it knows; nothing "
               "ran, and the same command is refused again.", retry=False)


@dataclass(frozen=True)
class ToolCheck:
    """What a backend's pre-flight found on one node: ok, the finding, and the fix when not ok."""

    ok: bool
    finding: str
    fix: str = ""


@dataclass(frozen=True)
class Option:
    """One of a backend's own options, as the views offer it (`launch`'s or `doctor`'s argparse group; the
    API's keyword of the same `dest`). `kind`: "text"; "nodes" (a node count), "procs" (processes per node)
    or "count" (a whole number >= `minimum`); "switch" (on when given)."""

    flag: str
    help: str  # already translated (the backend's tr())
    kind: str = "text"
    minimum: int = 0
    metavar: str | None = None
    default: Any = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class NodeTools:
    """What doctor's facts say a node has, as a backend's tool check reads them."""

    node: str
    is_master: bool
    tools: Mapping[str, Any]
    packages: Mapping[str, Any]


class Backend:
    name: ClassVar[str] = ""
    in_spec: ClassVar[bool] = True  # `launcher = "NAME"` in a cluster spec, `--launcher NAME`
    over_ssh: ClassVar[bool] = True  # dscluster reaches the nodes itself, over ssh
    allocates: ClassVar[bool] = False  # a scheduler picks the nodes; they are known once allocated
    nodes_python: ClassVar[bool] = True  # the ranks run the spec's `python` (the runner names it)
    reports_rank_exits: ClassVar[bool] = False  # launch.py's "Process N exits successfully" reaches the output
    warm_launch: ClassVar[bool] = False  # the runner's node command line names sys.executable (launcher/warm.py)
    selects_slots: ClassVar[bool] = True  # --include/--exclude may pick single devices of a host
    node_tools: ClassVar[tuple[str, ...]] = ()  # programs doctor's probe looks up on each node for check_tools
    # Debian packages the test machine (the launching host of the simulated cluster, whose nodes share its
    # programs) needs for this backend's runs: scripts/setup.sh test installs them (`packages.py`).
    host_packages: ClassVar[tuple[str, ...]] = ()
    # Debian packages the node image installs for this backend's runs on its nodes: `dscluster image build`
    # passes every registered backend's as docker/Dockerfile's LAUNCHER_PACKAGES (deploy/image.py).
    node_packages: ClassVar[tuple[str, ...]] = ()
    # Its programs' names as they start their own lines in a log ("NAME: ..."; regular expressions): never a
    # host's prefix (logtext.py).
    programs: ClassVar[tuple[str, ...]] = ()
    hooks: ClassVar[str | None] = None  # "module:Class" of the supervisor's hooks; None: runs.supervising.hooks.NoHooks

    on_this_machine: ClassVar[bool] = False  # the ranks run here only, without a hostfile

    # What its launcher prints (regular expressions; every registered backend's are read, since a pasted
    # log names no launcher). runs/supervising/detect.py: a line of the runner's output that means a rank (or the
    # launch) failed, whatever the exit code. rankerror.py: its words for a rank a signal ended, with
    # the groups `node`, `task` (the rank) and `what` (the shell's word: Killed, Segmentation fault...).
    # logtext.py: the label in front of every rank's line, with the group `rank`.
    failure_lines: ClassVar[tuple[str, ...]] = ()
    signal_line: ClassVar[str | None] = None
    # The explainer's signatures of what its launcher or scheduler prints (dscluster.sigtypes.Signature), read
    # for every log (signatures.py places them right after the messages' own).
    signatures: ClassVar[tuple] = ()
    rank_label: ClassVar[str | None] = None

    def where(self) -> str:
        """Where this backend's runs run, as `restart --hosts` names it when it cannot pick nodes."""
        return ""

    # ---- validation and pre-flight ------------------------------------------------------------
    def check_local(self, local: int | None) -> None:
        """Refuse `--local N` when this backend cannot run on this machine only (UsageError)."""

    def check_selection(self, include: str, setting: str) -> None:
        """Refuse a selection of single devices of a host (`include`, from --include/--exclude, named by
        `setting`) when the backend cannot honour it (UsageError)."""

    def check_tools(self, node: NodeTools) -> ToolCheck:
        """The tools this backend needs on `node` (doctor's `launcher` check)."""
        return ToolCheck(True, self.name)

    # ---- its own options (the views build them from these: commands/backendargs.py) -----------
    def options_title(self, command: str) -> str:
        """The title of its options' group in `launch --help` or `doctor --help` (`command`)."""
        return self.name

    def launch_options(self) -> tuple[Option, ...]:
        """`launch`'s options of this backend (its scheduler's request, its batch job)."""
        return ()

    def request_from(self, given: Mapping[str, Any]) -> Any | None:
        """The scheduler request its options give (`given`: option dest -> value, None where not given), None
        when none was given: carried as RunRequest.scheduler, opaque to every other module."""
        return None

    def owns(self, request: Any) -> bool:
        """Whether `request` is this backend's own (what its request_from builds)."""
        return False

    def refuse_request(self, launcher: str) -> None:
        """Its request's options were given under another `launcher`: refuse them (UsageError)."""
        raise ValueError(f"a {self.name} request under launcher {launcher!r}")

    def batch_requested(self, given: Mapping[str, Any]) -> bool:
        """Whether its options ask for a batch job (`submit_batch`) instead of a supervisor here."""
        return False

    def doctor_options(self) -> tuple[Option, ...]:
        """`doctor`'s options of this backend (checks of its own, e.g. a scheduler's)."""
        return ()

    def doctor(self, given: Mapping[str, Any]) -> tuple[list, str] | None:
        """Its own checks when its doctor options ask for them: (doctor's CheckResults, the row always
        shown); None otherwise (doctor checks the cluster)."""
        return None

    # ---- a scheduler's request (a backend that `allocates`; the defaults ask for nothing) -------
    def request(self, opts, spec) -> Any | None:
        """What the scheduler is asked for, from the launch request (a `runs.records.request.RunRequest`: its
        scheduler options and runner flags) and the cluster spec (None: none): an object with `ranks`
        (the world size it asks for), or None when nothing is asked."""
        return None

    def check_request(self, opts) -> None:
        """Refuse runner flags that contradict the scheduler options given with them (UsageError)."""

    def allocated_hosts(self, opts, spec) -> tuple[tuple[str, int], ...]:
        """The nodes (with their slots) of the allocation this process already runs in; empty outside one
        (the supervisor's `allocate` hook finds them)."""
        return ()

    def request_record(self, request: Any, hosts: tuple[tuple[str, int], ...]) -> dict[str, Any] | None:
        """What run.json's `launch.<name>` (the record's `scheduler`) records of the request (`hosts`: those of an allocation this
        process runs in, else empty)."""
        return None

    def recorded_request(self, recorded: Mapping[str, Any] | None) -> Any | None:
        """The request again, from what `request_record` recorded (a restart asks for the same)."""
        return None

    def job_summary(self, recorded: Mapping[str, Any] | None, active: bool) -> Mapping[str, Any] | None:
        """The run's job for the views (`status`, `runs`, the panel), from what the supervisor recorded in the
        record's `scheduler` and, while the run is `active`, what the scheduler says now; None: no job."""
        return None

    def job_brief(self, job: Mapping[str, Any], long: bool = False) -> str:
        """The job in a few words (`runs`' list; `long`: with its state, the panel's run list)."""
        return ""

    def job_line(self, job: Mapping[str, Any]) -> str:
        """The job's line of `dscluster status`."""
        return ""

    def allocation_args(self, request: Any, hosts: tuple[tuple[str, int], ...]) -> tuple[str, ...]:
        """Launcher args that keep an attempt on `hosts` inside an existing allocation."""
        return ()

    def allocation_preview(self, request: Any, run_id: str) -> tuple[tuple[tuple[str, int], ...], list[str]]:
        """For a dry run before the nodes are known: placeholder hosts, and the lines that show how the
        allocation is asked for."""
        return (), []

    # ---- a batch job that supervises the run from inside it (the defaults have none) -----------
    def batch_record(self, recorded: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """The launch's recorded request for a batch job (its allocation is known only once it runs)."""
        return recorded

    def batch_preview(self, record, run_dir: Path, supervisor: str) -> list[str]:
        """A batch job's dry run: the lines that show the job (its script). `supervisor`: the supervisor's
        module, run in the job as `python -I -m MODULE --handoff FILE RUN_DIR`."""
        return []

    def submit_batch(self, record, run_dir: Path, secrets: Mapping[str, str],
                     supervisor: str) -> tuple[str, Mapping[str, Any]]:
        """Submit the run (already written in `run_dir`) as a batch job: (job id, what the record's `scheduler`
        says of it)."""
        raise NotImplementedError(f"{self.name} has no batch jobs")

    def submitted_lines(self, run_id: str, job: str, world_size: int | None) -> tuple[str, list[str]]:
        """What `launch` prints once the job is submitted, and the commands that watch it."""
        return "", []

    # ---- the nodes' side ----------------------------------------------------------------------
    def transport_env(self, spec, no_mux: tuple[str, ...]) -> dict[str, str]:
        """Environment that makes the runner's transport use the cluster's ssh_config and pinned host keys
        on connections of the run's own (`no_mux`: ssh options without connection sharing)."""
        return {}

    # ---- the pure plan of an attempt (launcher/plan.py) ---------------------------------------
    def env_values(self, req: LaunchRequest) -> dict[str, str]:
        """Values the ranks' environment file carries for this backend."""
        return {}

    def secrets_in_runner_env(self, req: LaunchRequest) -> bool:
        """Whether the runner's own environment carries the run's secret values (for local ranks or
        mpirun's `-x NAME`); never on a command line."""
        return True

    def command(self, req: LaunchRequest, parts: CommandParts) -> list[str]:
        """The whole command line of an attempt (launcher/plan.py runs it on this machine). By default
        DeepSpeed's runner over the hosts with this backend's `runner_args` and `program_prefix`
        (plan.deepspeed_runner_command), or the ranks on this machine without hosts (local.local_command); a
        backend that starts its ranks another way returns its own."""
        from dscluster.launcher import plan  # noqa: PLC0415 - plan imports this package
        from dscluster.launcher.backends.local import local_command  # noqa: PLC0415

        return plan.deepspeed_runner_command(req, self, parts) if req.hosts else local_command(req, parts)

    def runner_args(self, req: LaunchRequest, *, logs: Path, secret_env: Mapping[str, str],
                    add_file: Callable[[PlannedFile], None]) -> list[str]:
        """DeepSpeed runner flags of a multi-node attempt after --hostfile/--master_addr/--master_port/
        --launcher/--no_ssh_check. `add_file` plans a file the supervisor writes before the runner starts."""
        return self.selection_args(req)

    @staticmethod
    def selection_args(req: LaunchRequest) -> list[str]:
        """`--force_multi` for a single host (the runner would start it here otherwise, even when it is
        remote), and the user's `--include` (devices other than 0..n-1 of a host)."""
        return (["--force_multi"] if len(req.hosts) == 1 else []) + ([f"--include={req.include}"] if req.include else [])

    def program_prefix(self, req: LaunchRequest) -> list[str]:
        """What the runner starts before the user's program (a shim), when the backend needs one."""
        return []
