"""Pure builder: the argv and env that start DeepSpeed's own runner for one attempt of a run.

Nothing here touches the filesystem or the network: `build_plan` returns the runner's argv, its
environment, and the files (hostfile, DS_ENV_FILE, secrets script) that the supervisor writes into
the run directory before starting it. `--dry-run` prints exactly this.

Why each piece is there:
- `--master_addr` = the first hostfile host: rank 0 runs there; a wrong address hangs init.
- a per-attempt `--master_port`: two runs on the same nodes must not share a rendezvous port, and a
  restart must not trip over a port the killed attempt still holds in TIME_WAIT.
- DS_ENV_FILE (absolute, in the run dir): the runner exports only PYTHON*/NCCL*/UCX* vars; PATH must
  travel too (a remote PATH that finds another ninja rebuilds every JIT op, ~80 s per launch). The
  parser crashes on blank or comment lines, so the file has neither.
- DSCLUSTER_RUN_ID in that env: every process of the run on every node inherits it; teardown kills
  exactly the processes carrying it (never a `pkill -f` pattern that hits another run).
- secrets (names like *TOKEN*, *KEY*...) never go into argv: the runner would put them on pdsh's
  and ssh's command lines. pdsh sources them from a 0600 script (`--venv_script`); an MPI launcher
  copies them from its own environment (`-x NAME`, no value): the backend's `secrets_in_runner_env`.
- while restarts remain (`warm`, pdsh): the runner's `sys.executable` is `python -P -m dscluster.launcher.warm`
  and DSCLUSTER_WARM is in the env file, so every node's launch.py of the next attempt imports torch before
  a fault and a restart starts within seconds of the heal (launcher/warm.py); the ranks' argv and
  environment are those of a cold start.
- `--force_multi` when there is a single host: otherwise the runner starts it locally even when the
  host is remote.
- `--enable_each_rank_log`: per-rank stdout/stderr files in <run>/logs.
- DSCLUSTER_PROGRESS=1 and launcher/rankhook first on PYTHONPATH: every rank records its progress through
  torch.distributed's collectives where its node's watchdog reads it, so a collective hung by a live rank
  is found in seconds (launcher/progress.py, runs/supervising/hang.py); `--env DSCLUSTER_PROGRESS=0` turns it off.
- with secrets, each rank runs its program through launcher/masklog.py (the target becomes
  `-m dscluster.launcher.masklog KIND PROGRAM ARGS`; DSCLUSTER_SECRET_NAMES in the env file names the
  secrets): a value the program prints reaches the rank log as `***`.
- `python -P` (safe path) for the runner itself: it runs in the user's directory as the launching
  user, and a module planted there by the node user must not be imported (see safepython.py).
- the backend's own part (launcher/backends): its environment values, its runner flags after the common
  ones, and a shim before the program where its launcher starts no launch.py (a scheduler's rank shim sets
  RANK, LOCAL_RANK, MASTER_ADDR from the scheduler's task variables; each backend's module says why).
- the user's own runner flags (launcher/runnerflags.py): `--include` only when it picks devices other
  than 0..n-1 of a host (the hostfile's slots say the rest), `--launcher_args`, `--no_python`,
  `--no_local_rank`, `--bind_cores_to_rank`, `--bind_core_list`, `--log_level`, `--quiet` as written; a
  fixed `--master_port` replaces the per-attempt one. Where a backend passes options of its own in
  `--launcher_args`, the user's follow them (a launcher takes the last of a repeated option).
- <run>/ds_config.json: the user's ds_config with DeepSpeed's csv monitor added when it has none
  (runs/records/metrics.py), so any script's learning rate and step timers are charted; the script's
  `--deepspeed_config` argument points at it.
- PyTorch's NCCL flight recorder (TORCH_NCCL_TRACE_BUFFER_SIZE, dump on a collective timeout into
  <run>/nccl_trace/): the record of the last collectives of every rank is what tells a hung rank from
  the ones waiting for it. On for every run (gloo ignores it) unless --env sets these variables.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dscluster.launcher import backends
from dscluster.launcher.masklog import SECRET_NAMES_VAR, wrapped_target
from dscluster.launcher.progress import ENV as PROGRESS_VAR
from dscluster.launcher.redact import REDACTED, split_secrets
from dscluster.launcher.runnerflags import RunnerFlags
from dscluster.launcher.warm import WARM_VAR
from dscluster.safepython import module_argv, module_argv_for

# The environment that must reach the ranks when the launching machine has it.
FORWARDED_ENV = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "DEEPSPEED_TIMEOUT", "TORCH_EXTENSIONS_DIR",
                 "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "HF_HOME", "OMP_NUM_THREADS")
RUN_ID_VAR = "DSCLUSTER_RUN_ID"
NCCL_TRACE_DIR = "nccl_trace"
RUN_DS_CONFIG = "ds_config.json"  # the ds_config the ranks read when dscluster added a monitor to the user's
FLIGHT_RECORDER_ENTRIES = 2000  # collectives kept per rank; about 1 MB of host memory


@dataclass(frozen=True)
class Target:
    """What the ranks run: a script path or a module (`-m pkg.mod`), plus its arguments."""

    program: str
    is_module: bool = False
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class LaunchRequest:
    run_id: str
    run_dir: Path
    target: Target
    hosts: tuple[tuple[str, int], ...]  # hostfile order = node_rank order; empty = this machine only
    master_port: int
    launcher: str = "pdsh"  # a registered backend's name (launcher/backends): local | pdsh | openmpi | slurm
    python: str = "python3"  # the interpreter path, identical on every node (shared storage / image)
    cwd: str = "."
    base_env: Mapping[str, str] = field(default_factory=dict)  # the launching environment
    user_env: Mapping[str, str] = field(default_factory=dict)  # --env K=V
    transport_env: Mapping[str, str] = field(default_factory=dict)  # pdsh/ssh settings (cluster ssh_config)
    ssh_port: int | None = None
    is_root: bool = False
    attempt: int = 1
    local_procs: int = 1  # ranks on this machine for the local backend
    network_interface: str | None = None
    include: str | None = None  # the runner's --include (devices other than 0..n-1), see runnerflags.py
    launcher_args: tuple[str, ...] = ()  # the user's --launcher_args, word by word, then the backend's own
    # The request's DeepSpeed runner flags as given (runnerflags.py), read here as they are: --no_python,
    # --no_local_rank and the flags passed on to launch.py (--bind_cores_to_rank, --log_level...). The hosts,
    # `include` and `master_port` above are what the placement and the attempt made of the selecting ones.
    runner: RunnerFlags = RunnerFlags()
    ds_config_text: str | None = None  # the run's ds_config (the user's + DeepSpeed's monitor), see prepare.py
    # This machine's interpreter when it is not `python` (the nodes' one): it runs DeepSpeed's runner,
    # which is told to start `python` on the nodes (see runner_argv).
    runner_python: str | None = None
    # Where the files DeepSpeed's runner reads on this machine (hostfile, DS_ENV_FILE) are written: a
    # directory only the launching user writes (dscluster.trust.runner_dir). The run directory is the
    # node user's, who could remove the hostfile between its write and the runner's read (the runner
    # then runs the script here, as the launching user); it gets a copy to read. None: the run directory.
    files_dir: Path | None = None
    # "AFTER:LINGER" while restarts remain (pdsh): every node's next launch.py is pre-warmed, launcher/warm.py;
    # "-": a restart's last attempt, which takes the warm launch.py but pre-warms none
    warm: str | None = None

    @property
    def backend(self) -> backends.Backend:
        """The launcher backend this request names (the registry's one object; the name is what is recorded)."""
        return backends.get(self.launcher)


def flight_recorder_env(run_dir: Path, torch_version: str | None = None) -> dict[str, str]:
    """PyTorch's NCCL flight recorder: a ring of the last collectives per rank, dumped (one file per rank)
    into the run directory when a collective times out. Torch 2.8 renamed its settings
    (TORCH_NCCL_TRACE_BUFFER_SIZE -> TORCH_FR_BUFFER_SIZE, TORCH_NCCL_DEBUG_INFO_TEMP_FILE ->
    TORCH_FR_DUMP_TEMP_FILE) and warns on every rank, gloo too, whenever an old name is set, even
    beside the new one: so one set of names, the one the ranks' torch reads (`torch_version`, default
    the torch installed here: the nodes run the same venv or the node image's same pin), the new names
    where torch is not installed here."""
    prefix = str(Path(run_dir) / NCCL_TRACE_DIR / "rank_")
    if _torch_before(torch_version, (2, 8)):
        return {"TORCH_NCCL_TRACE_BUFFER_SIZE": str(FLIGHT_RECORDER_ENTRIES), "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
                "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix}
    return {"TORCH_FR_BUFFER_SIZE": str(FLIGHT_RECORDER_ENTRIES), "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
            "TORCH_FR_DUMP_TEMP_FILE": prefix}


def _torch_before(version: str | None, release: tuple[int, int]) -> bool:
    """Whether torch `version` (default: the installed one, read without importing torch) is older than
    `release`; False when unknown."""
    if version is None:
        from importlib.metadata import PackageNotFoundError  # noqa: PLC0415
        from importlib.metadata import version as installed

        try:
            version = installed("torch")
        except PackageNotFoundError:
            return False
    m = re.match(r"(\d+)\.(\d+)", version)
    return bool(m) and (int(m.group(1)), int(m.group(2))) < release


@dataclass(frozen=True)
class PlannedFile:
    path: Path
    text: str
    mode: int = 0o644
    secret: bool = False  # owned by the node user, 0600


@dataclass(frozen=True)
class LaunchPlan:
    argv: list[str]
    env: dict[str, str]  # added on top of the launching environment
    files: tuple[PlannedFile, ...]
    master_addr: str
    master_port: int
    world_size: int
    rank_nodes: tuple[str, ...]  # rank -> host

    def shown_files(self) -> list[tuple[str, str]]:
        """Files as --dry-run shows them: secret values masked."""
        out = []
        for f in self.files:
            text = f.text
            if f.secret:
                text = "\n".join(line.split("=", 1)[0] + "=" + REDACTED if "=" in line else line
                                 for line in text.splitlines()) + "\n"
            out.append((str(f.path), text))
        return out


def hostfile_text(hosts: tuple[tuple[str, int], ...]) -> str:
    return "".join(f"{h} slots={s}\n" for h, s in hosts)


def _hostfile_hosts(req: LaunchRequest) -> tuple[tuple[str, int], ...]:
    """The hostfile's slots: a host whose devices --include picks (e.g. 1,3) needs slots up to the
    highest of them; the runner's --include then selects exactly those."""
    if not req.include:
        return req.hosts
    top: dict[str, int] = {}
    for part in req.include.split("@"):
        host, _, slots = part.partition(":")
        top[host] = max(int(x) for x in slots.split(",")) + 1 if slots else 0
    return tuple((h, max(s, top.get(h, 0))) for h, s in req.hosts)


def rank_nodes(hosts: tuple[tuple[str, int], ...], local_procs: int = 1) -> tuple[str, ...]:
    if not hosts:
        return tuple("localhost" for _ in range(local_procs))
    return tuple(h for h, slots in hosts for _ in range(slots))


def _path_with_python(path: str, python: str) -> str:
    """PATH with the interpreter's bin dir first, so the nodes find the same ninja, deepspeed, etc."""
    bindir = str(Path(python).parent)
    parts = [p for p in path.split(os.pathsep) if p]
    if bindir not in parts[:1]:
        parts = [bindir] + [p for p in parts if p != bindir]
    return os.pathsep.join(parts)


def env_file_lines(req: LaunchRequest, plain_user_env: Mapping[str, str]) -> list[str]:
    values: dict[str, str] = {}
    for key in FORWARDED_ENV:
        if req.base_env.get(key):
            values[key] = req.base_env[key]
    values["PATH"] = _path_with_python(values.get("PATH", "/usr/local/bin:/usr/bin:/bin"), req.python)
    if req.network_interface:
        values.setdefault("NCCL_SOCKET_IFNAME", req.network_interface)
        values.setdefault("GLOO_SOCKET_IFNAME", req.network_interface)
    values[RUN_ID_VAR] = req.run_id
    values["DSCLUSTER_RUN_DIR"] = str(req.run_dir)
    values["DSCLUSTER_ATTEMPT"] = str(req.attempt)
    values["DSCLUSTER_MASTER_PORT"] = str(req.master_port)
    if _warm_nodes(req):
        values[WARM_VAR] = req.warm
    values.update(req.backend.env_values(req))
    values.update(flight_recorder_env(req.run_dir))
    values.update(plain_user_env)
    values.update(progress_env(values, req.base_env))
    secret_names = sorted(k for k in req.user_env if k not in plain_user_env)
    if secret_names:
        values[SECRET_NAMES_VAR] = ",".join(secret_names)  # names only: the mask reads the values from the env
    lines = []
    for key, val in values.items():
        # One KEY=VALUE per line; DeepSpeed's parser has no escapes, so a newline cannot be carried.
        val = str(val).replace("\n", " ").strip()
        lines.append(f"{key}={val}")
    return lines


RANK_HOOK = str(Path(__file__).resolve().parent / "rankhook")  # its sitecustomize records the collectives


def progress_env(values: Mapping[str, str], base_env: Mapping[str, str]) -> dict[str, str]:
    """Every rank records its progress through its collectives (launcher/progress.py, for runs/supervising/hang.py): the
    rank hook first on PYTHONPATH (before the user's own, from --env or the launching environment), unless
    --env DSCLUSTER_PROGRESS=0."""
    if values.get(PROGRESS_VAR, base_env.get(PROGRESS_VAR)) == "0":
        return {PROGRESS_VAR: "0"}
    rest = values.get("PYTHONPATH", base_env.get("PYTHONPATH", ""))
    parts = [RANK_HOOK, *(p for p in rest.split(os.pathsep) if p and p != RANK_HOOK)]
    return {PROGRESS_VAR: "1", "PYTHONPATH": os.pathsep.join(parts)}


def runner_argv(req: LaunchRequest) -> list[str]:
    """argv of DeepSpeed's runner, in safe-path mode (nothing imported from the user's directory). Its
    multi-node runners start `sys.executable` on every node: when the nodes' interpreter (`python`) is
    another path than this machine's (`runner_python`), the runner runs here and names the nodes' one."""
    if _warm_nodes(req):  # the nodes run launch.py through the warm shim (launcher/warm.py)
        shim = " ".join(shlex.quote(w) for w in module_argv(req.python, "dscluster.launcher.warm"))
        return module_argv_for(req.runner_python or req.python, "deepspeed.launcher.runner", shim, unbuffered=True)
    if req.runner_python and req.runner_python != req.python and req.hosts and req.backend.nodes_python:
        return module_argv_for(req.runner_python, "deepspeed.launcher.runner", req.python, unbuffered=True)
    return module_argv(req.python, "deepspeed.launcher.runner", unbuffered=True)


def _warm_nodes(req: LaunchRequest) -> bool:
    """Whether the nodes' launch.py goes through launcher/warm.py (while restarts remain): a backend whose
    node command line names `sys.executable` (pdsh)."""
    return bool(req.warm) and bool(req.hosts) and req.backend.warm_launch


def build_plan(req: LaunchRequest) -> LaunchPlan:
    if not backends.known(req.launcher):
        raise ValueError(f"launcher must be one of {backends.names()}, not {req.launcher!r}")
    backend = req.backend
    run_dir = Path(req.run_dir)
    logs = run_dir / "logs"
    plain_env, secret_env = split_secrets(dict(req.user_env))
    files: list[PlannedFile] = []
    env: dict[str, str] = {}

    private = Path(req.files_dir) if req.files_dir is not None else run_dir

    def runner_reads(name: str, text: str) -> Path:
        files.append(PlannedFile(private / name, text))
        if private != run_dir:
            files.append(PlannedFile(run_dir / name, text))  # a copy to read; the runner never does
        return private / name

    env_file = runner_reads("ds_env", "\n".join(env_file_lines(req, plain_env)) + "\n")
    if req.ds_config_text is not None:
        files.append(PlannedFile(run_dir / RUN_DS_CONFIG, req.ds_config_text))
    env["DS_ENV_FILE"] = str(env_file)
    # Local processes of the run (runner, pdsh, ssh clients, local ranks) carry the marker too.
    env[RUN_ID_VAR] = req.run_id
    env["DSCLUSTER_RUN_DIR"] = str(run_dir)
    if backend.secrets_in_runner_env(req):
        env.update(secret_env)  # for local ranks / mpirun's `-x NAME`; never on a command line

    # Safe-path mode: the runner starts in the user's working directory (its pdsh command `cd`s the ranks
    # there) but must not import from it: the node user may write there, the runner runs as the launcher.
    local = backend.on_this_machine or not req.hosts
    if local:
        master_addr = "127.0.0.1"
        # The local runner path copies its whole environment to the ranks: DS_ENV_FILE is unused, so
        # give the local processes the same variables the file carries.
        for line in env_file_lines(req, plain_env):
            k, v = line.split("=", 1)
            env.setdefault(k, v)
        world = req.local_procs
    else:
        master_addr = req.hosts[0][0]
        world = sum(s for _, s in req.hosts)
        env.update(req.transport_env)
    # The whole command line is the backend's (Backend.command): DeepSpeed's runner with its own flags by default.
    argv = backend.command(req, CommandParts(logs, secret_env, files.append, runner_reads))
    return LaunchPlan(argv=argv, env=env, files=tuple(files), master_addr=master_addr,
                      master_port=req.master_port, world_size=world,
                      rank_nodes=rank_nodes(req.hosts, req.local_procs) if not local else
                      rank_nodes((), req.local_procs))


@dataclass(frozen=True)
class CommandParts:
    """What a backend's command line (Backend.command) is built with besides the request: the per-rank log
    directory, the run's secret values (for the runner's environment, never its argv), `add_file` (a file
    the supervisor writes before the runner starts) and `runner_reads(name, text)` (a file the runner reads on
    this machine, written where only the launching user writes: its path)."""

    logs: Path
    secret_env: Mapping[str, str]
    add_file: Callable[[PlannedFile], None]
    runner_reads: Callable[[str, str], Path]


def deepspeed_runner_command(req: LaunchRequest, backend: backends.Backend, parts: CommandParts) -> list[str]:
    """DeepSpeed's runner over the hosts (Backend.command's default): its hostfile, rank 0's address, the
    attempt's port, the backend as its --launcher, then the backend's own flags (transport, per-rank logs,
    secrets, launcher_args), the user's runner flags, the backend's shim and the program."""
    hostfile = parts.runner_reads("hostfile", hostfile_text(_hostfile_hosts(req)))
    argv = [*runner_argv(req), f"--hostfile={hostfile}", f"--master_addr={req.hosts[0][0]}",
            f"--master_port={req.master_port}", f"--launcher={backend.name}", "--no_ssh_check"]
    argv += backend.runner_args(req, logs=parts.logs, secret_env=parts.secret_env, add_file=parts.add_file)
    return argv + program_argv(req, backend.program_prefix(req), bool(parts.secret_env))


def program_argv(req: LaunchRequest, prefix: list[str], secrets: bool) -> list[str]:
    """The end of the runner's argv: the user's own runner flags, a backend's shim (`prefix`), then the program
    (through the secret mask when the run has secrets) and its arguments."""
    flags = req.runner
    argv = (["--no_python"] if flags.no_python else []) + (["--no_local_rank"] if flags.no_local_rank else [])
    argv += list(flags.passed) + list(prefix)  # e.g. Slurm's srun_rank.py shim
    target = req.target
    if secrets and not req.runner.no_python:
        # Each rank's output reaches its log through the secret mask (launcher/masklog.py).
        module, args = wrapped_target(target.is_module, target.program, target.args)
        target = Target(module, True, tuple(args))
    return argv + (["--module"] if target.is_module else []) + [target.program, *target.args]
