"""Everything checked before anything starts on any node, and the run record it produces.

Order: the program exists -> the cluster spec / hostfile is valid -> the ds_config (the value after
--deepspeed_config in the script's arguments) is valid for the real world size -> doctor's fast checks.
Each failure raises a typed error naming the setting and the fix.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dscluster import paths, trust
from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr
from dscluster.launcher import backends
from dscluster.launcher.plan import build_plan
from dscluster.launcher.redact import redact_argv, redact_env, split_secrets
from dscluster.launcher.runnerflags import (
    RunnerFlags,
    check_launcher,
    check_launcher_args,
    check_master_addr,
    check_port,
    check_refused,
    check_ssh_port,
    parse_node_specs,
    select,
    select_local,
)
from dscluster.runs import store
from dscluster.runs.record import LaunchSpec, RunRecord, pinned

DEFAULTS = {
    "max_restarts": 2,
    "restart_wait": 120.0,  # before a restart: how long to wait for a lost node to answer again
    "stall_timeout": 900.0,  # JIT builds can be silent for minutes; a hung collective lasts forever
    "heartbeat_timeout": 10.0,  # a node silent this long is lost (partition); plain DeepSpeed: ~17 min
    "ping_timeout": 15.0,  # a watchdog that hears nothing this long reaps its node's ranks
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
    slurm: Any | None = None  # launcher.slurm.SlurmAsk: what to ask Slurm for outside an allocation
    cluster_spec: Any | None = None  # cluster.spec.ClusterSpec already resolved (a restart's, as recorded)
    runner: RunnerFlags = field(default_factory=RunnerFlags)  # DeepSpeed's own runner flags, as written
    allow_shrink: bool = False  # a node lost past restart_wait: continue on the nodes that remain
    # Leave out the nodes doctor's last verdict or the cluster's last failed run point to (runs/exclude.py);
    # with allow_shrink, the supervisor leaves out a node an attempt failed on before restarting.
    exclude_unhealthy: bool = False
    # The batch (dscluster.batchplan.Batch) of the run this one continues (a restart): on another world
    # size the ranks get a ds_config whose batch keys keep its global batch where any can.
    keep_batch: Any | None = None
    # Inline DeepSpeed configs a dry run names by the path a real run writes them to, without writing them
    # (a dry run writes nothing): path -> config, read here instead of the file.
    unwritten_configs: Mapping[str, Any] | None = None


def parse_env(pairs: list[str]) -> dict[str, str]:
    """`--env NAME=value`, or `--env NAME` for this environment's value: the way to pass a secret
    without putting it on dscluster's own command line (visible in ps, kept in shell history)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not key or not key.replace("_", "a").isalnum() or not key.isascii() or key[0].isdigit():
            raise UsageError(tr("--env {pair!r} is not KEY=VALUE", pair=pair),
                             tr("write it as --env NAME=value, e.g. --env OMP_NUM_THREADS=4"))
        if not sep:
            if key not in os.environ:
                raise UsageError(tr("--env {key}: {key} is not set in this environment", key=key),
                                 tr("export {key}=... first, or write --env {key}=value", key=key), setting="--env")
            value = os.environ[key]
        if "\n" in value:
            raise UsageError(tr("--env {key}: the value contains a newline", key=key),
                             tr("pass a single-line value"))
        out[key] = value
    return out


def deepspeed_env_files(cwd: Path, environ: dict[str, str] | None = None) -> list[Path]:
    """The `.deepspeed_env` files DeepSpeed's runner would read for a launch from `cwd`: the name is
    DS_ENV_FILE's value when the user set it, else `.deepspeed_env`; first in the home directory, then in
    the launch directory (the later one wins on a name both set). dscluster points DS_ENV_FILE at the
    run's own file, so it reads these itself and merges them into it."""
    env = os.environ if environ is None else environ
    name = env.get("DS_ENV_FILE") or ".deepspeed_env"
    found: list[Path] = []
    for base in (Path(os.path.expanduser("~")), cwd):
        path = base / name  # an absolute DS_ENV_FILE names one file, as os.path.join makes it in DeepSpeed
        if path.is_file() and path.resolve() not in [p.resolve() for p in found]:
            found.append(path)
    return found


def read_deepspeed_env(files: list[Path]) -> dict[str, str]:
    """KEY=VALUE lines, as DeepSpeed's runner splits them (at the first `=`, both sides stripped). A blank or
    `#` line is skipped (DeepSpeed's runner would stop with a ValueError on it); any other line without
    `=` is refused, naming the file and line."""
    values: dict[str, str] = {}
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as err:
            raise ConfigError(tr("{path} cannot be read: {err}", path=path, err=err.strerror or err),
                              tr("make it readable, or move it aside"), setting=".deepspeed_env") from None
        for i, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise ConfigError(tr("{path}, line {n}: {line!r} is not NAME=VALUE", path=path, n=i, line=line[:80]),
                                  tr("write one NAME=VALUE per line (DeepSpeed's runner reads the file the same "
                                     "way)"), setting=".deepspeed_env")
            values[key.strip()] = value.strip()
    return values


# The value-taking options DeepSpeed's add_config_arguments gives a training script (plus this trainer's
# dashed spelling). argparse keeps the LAST of a repeated option, and takes an unambiguous prefix
# (`--deepspeed_conf`) as the option itself.
DS_CONFIG_OPTIONS = ("--deepspeed_config", "--deepspeed-config", "--deepscale_config")


def _config_option(token: str) -> str | None:
    name = token.split("=", 1)[0]
    for option in DS_CONFIG_OPTIONS:
        if option.startswith(name) and len(name) > len("--deepspeed"):  # `--deepspeed` alone is the flag
            return option
    return None


# Finds a dotted module without executing any of it: PathFinder on the launch directory + sys.path for
# the top-level name (importlib.util.find_spec for one that a meta-path finder provides), then the
# parent's submodule_search_locations for each further part.
_FIND_MODULE = """import sys
from importlib.machinery import PathFinder
from importlib.util import find_spec
top, *rest = sys.argv[1].split(".")
spec = PathFinder.find_spec(top, [sys.argv[2]] + [p for p in sys.path if p not in ("", "/")]) or find_spec(top)
for part in rest:
    locations = spec.submodule_search_locations if spec else None
    spec = PathFinder.find_spec(part, list(locations)) if locations else None
sys.exit(0 if spec else 1)
"""


HF_DS_OPTION = "--deepspeed"  # the Hugging Face Trainer's (and Accelerate examples') `--deepspeed ds_config.json`


def _hf_value(value: str | None) -> bool:
    """Whether the word after `--deepspeed` is HF's ds_config file (DeepSpeed's own `--deepspeed` is a switch,
    followed by another option or nothing)."""
    return bool(value) and not value.startswith(("-", "{"))


def ds_config_uses(args: list[str]) -> list[tuple[str, str | None]]:
    """(option as typed, value) for every ds_config option in a script's arguments, in order, up to a
    `--` (after which argparse reads no options). A missing value is None. HF's `--deepspeed FILE` and
    `--deepspeed=FILE` count (option "--deepspeed"); DeepSpeed's `--deepspeed` switch does not."""
    uses: list[tuple[str, str | None]] = []
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == HF_DS_OPTION and i + 1 < len(args) and _hf_value(args[i + 1]):
            uses.append((arg, args[i + 1]))
            continue
        if arg.startswith(HF_DS_OPTION + "="):
            uses.append((HF_DS_OPTION, arg.split("=", 1)[1] or None))
            continue
        if not arg.startswith("--") or _config_option(arg) is None:
            continue
        if "=" in arg:
            uses.append((arg.split("=", 1)[0], arg.split("=", 1)[1]))
        else:
            uses.append((arg, args[i + 1] if i + 1 < len(args) else None))
    return uses


def check_repeated_options(args: list[str]) -> None:
    """The script's own arguments: the ds_config is named once. Given twice, DeepSpeed's argparse would
    use the last while a check of the first would pass a file that never runs; `--deepscale_config`
    beside `--deepspeed_config` is an assertion inside every rank. Refused here, with the fix."""
    uses = ds_config_uses(args)
    for option, value in uses:
        if value is None or value.startswith("--"):
            raise UsageError(tr("{option} has no value in the script's arguments", option=option),
                             tr("write {option} ds_config.json", option=option), setting="deepspeed_config")
    if len({value for _, value in uses}) > 1 or len({_config_option(o) for o, _ in uses} - {"--deepspeed-config"}) > 1:
        shown = " ".join(f"{o} {v}" for o, v in uses)
        raise UsageError(tr("the script's arguments name the DeepSpeed config {n} times ({shown}); DeepSpeed "
                            "would use only the last", n=len(uses), shown=shown),
                         tr("keep one --deepspeed_config: the file you mean to run ({last}?)", last=uses[-1][1]),
                         setting="deepspeed_config")


def find_ds_config(args: list[str]) -> str | None:
    """The ds_config the script will read: the last one named, as argparse takes it."""
    uses = [value for _, value in ds_config_uses(args) if value is not None]
    return uses[-1] if uses else None


def hf_ds_config(args: list[str]) -> bool:
    """Whether the script names its ds_config the Hugging Face way (`--deepspeed FILE`): the Trainer (or
    Accelerate) then fills its "auto" values in before DeepSpeed reads it."""
    return any(option == HF_DS_OPTION for option, _ in ds_config_uses(args))


def check_program(program: str, module: bool, cwd: Path, python: str, no_python: bool = False) -> None:
    if no_python:
        if module:
            raise UsageError(tr("--no_python and --module cannot be used together"),
                             tr("--no_python runs an executable; --module runs python -m MODULE: keep one"),
                             setting="--no_python")
        import shutil

        path = (cwd / program) if "/" in program else None
        if path is not None and not (path.is_file() and os.access(path, os.X_OK)):
            raise ConfigError(tr("--no_python: {path} is not an executable file", path=path),
                              tr("chmod +x it, or drop --no_python to run it with python"), setting="--no_python")
        if path is None and shutil.which(program) is None and not (cwd / program).is_file():
            raise ConfigError(tr("--no_python: {name} is not found on PATH", name=program),
                              tr("give the executable's path, e.g. ./{name}", name=program), setting="--no_python")
        return
    if module:
        # The module must be found by the interpreter the ranks use, from the launch directory - found,
        # never imported: importing `pkg.mod` runs pkg/__init__.py, and the launch directory may be the
        # node user's to write while this runs as the launching user. So: cwd "/" (nothing from the
        # launch directory on the probe's own sys.path), the launch directory only searched as data.
        res = subprocess.run([python, "-c", _FIND_MODULE, program, str(cwd)], cwd="/", capture_output=True,
                             timeout=60)
        if res.returncode != 0:
            raise ConfigError(tr("module {name!r} cannot be imported by {python}", name=program, python=python),
                              tr("check the module name, or install it on every node"), setting="module")
        return
    path = (cwd / program) if not os.path.isabs(program) else Path(program)
    if path.is_dir():
        main = path / "__main__.py"
        hint = (tr("give the script inside it, e.g. {path}/train.py; or run the package: -m {name}", path=program,
                   name=path.name) if main.is_file() else
                tr("give the path of the .py file inside it, e.g. {path}/train.py", path=program))
        raise ConfigError(tr("training script {path} is a directory, not a file", path=path), hint, setting="script")
    if not path.is_file():
        raise ConfigError(tr("training script {path} does not exist", path=path),
                          tr("give the path of a .py file (relative to {cwd}), or -m MODULE", cwd=cwd),
                          setting="script")


def check_ds_config(args: list[str], cwd: Path, world_size: int, batch_plan: Any | None = None,
                    unwritten: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The ds_config the script names, resolved for `world_size` ranks; with a `batch_plan`
    (dscluster.batchplan) its batch keys are the plan's, as the ranks of a restart will read them."""
    ref = find_ds_config(args)
    if ref is None:
        return None
    return checked_config_file(ref, cwd, world_size, batch_plan, auto_ok=hf_ds_config(args), unwritten=unwritten)


# Accelerate's own way to name a ds_config without `accelerate launch` (with ACCELERATE_USE_DEEPSPEED=true):
# DeepSpeedPlugin reads it when the script gives none. Given with --env, it is the run's ds_config too.
ACCELERATE_DS_ENV = "ACCELERATE_DEEPSPEED_CONFIG_FILE"


def checked_config_file(ref: str, cwd: Path, world_size: int, batch_plan: Any | None = None, *,
                        auto_ok: bool = False, unwritten: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ds_config file read as DeepSpeed reads it and checked for `world_size` ranks ("auto" allowed for
    the Hugging Face / Accelerate way of naming it)."""
    path = (cwd / ref) if not os.path.isabs(ref) else Path(ref)
    from dscluster import batchplan, dsconfig

    config = dict(unwritten[str(path)]) if unwritten and str(path) in unwritten else dsconfig.load(path)
    if batch_plan is not None:
        config = batchplan.apply(config, batch_plan)
    try:
        return dsconfig.validate(config, world_size, auto_ok=auto_ok)
    except ConfigError as err:  # name the file: the message names a key, but which config holds it?
        raise ConfigError(f"{path}: {err.message}", err.hint, setting=err.setting) from None


def with_monitor(args: list[str], ds_config: dict[str, Any] | None, run_dir: Path,
                 reference: bool) -> tuple[list[str], str | None]:
    """(the script's arguments, the run's ds_config text or None). When the user's ds_config turns on no
    monitor, the run's copy adds DeepSpeed's csv monitor writing into the run directory, and the
    script's --deepspeed_config points at that copy: learning rate and step timers of any script are
    then charted with no change to it. The reference trainer writes its own metrics."""
    from dscluster.launcher.plan import RUN_DS_CONFIG
    from dscluster.runs.metrics import has_monitor, monitor_config

    if ds_config is None or reference or has_monitor(ds_config):
        return args, None
    import json

    config = {**ds_config, "csv_monitor": monitor_config(run_dir)}
    return pointed_at(args, str(run_dir / RUN_DS_CONFIG)), json.dumps(config, indent=2, sort_keys=True) + "\n"


def with_batch(args: list[str], ranks_args: list[str], ds_config_text: str | None, ds_config: dict[str, Any] | None,
               run_dir: Path, planned: Any) -> tuple[list[str], str]:
    """(the script's arguments, the run's ds_config text) with the batch keys of `planned`
    (dscluster.batchplan) on top of what `with_monitor` made: the ranks of a run continued on another
    world size read the run's own copy. A script given no ds_config (the reference trainer's defaults)
    is given one holding only the batch keys."""
    import json

    from dscluster import batchplan
    from dscluster.launcher.plan import RUN_DS_CONFIG

    base = json.loads(ds_config_text) if ds_config_text else ds_config
    text = json.dumps(batchplan.apply(base, planned), indent=2, sort_keys=True) + "\n"
    path = str(run_dir / RUN_DS_CONFIG)
    if find_ds_config(args) is None:
        return [*args, "--deepspeed_config", path], text
    return pointed_at(ranks_args, path), text


def pointed_at(args: list[str], path: str) -> list[str]:
    """The arguments with their --deepspeed_config value replaced by `path`."""
    out = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("--deepspeed_config", "--deepspeed-config") and i + 1 < len(args) or \
                arg == HF_DS_OPTION and i + 1 < len(args) and _hf_value(args[i + 1]):
            out += [arg, path]
            skip = True
        elif arg.startswith(("--deepspeed_config=", "--deepspeed-config=", HF_DS_OPTION + "=")):
            out.append(arg.split("=", 1)[0] + "=" + path)
        else:
            out.append(arg)
    return out


def git_commit(cwd: Path) -> str | None:
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() or None if res.returncode == 0 else None


@dataclass
class Prepared:
    record: RunRecord
    secrets: dict[str, str]
    shared: Path
    spec: Any | None


def resolve_target(opts: LaunchOptions):
    """(spec or None, hosts, launcher, shared dir) for the options."""
    if opts.local is not None:
        if opts.local < 1:
            raise UsageError(tr("--local needs a number of processes >= 1"), tr("e.g. --local 2"))
        return None, (), "local", paths.local_shared()
    from dscluster.cluster.hostfile import parse_hostfile
    from dscluster.cluster.spec import resolve_spec

    if opts.launcher and backends.get(opts.launcher).allocates and not (opts.hostfile or opts.cluster):
        try:
            spec = resolve_spec(None)
        except ConfigError:  # a Slurm cluster needs no dscluster spec: runs go to DSCLUSTER_SHARED
            return None, slurm_hosts(opts, None), "slurm", paths.local_shared()
        return spec, slurm_hosts(opts, spec), "slurm", Path(spec.shared_dir)
    try:
        spec = opts.cluster_spec if opts.cluster_spec is not None else resolve_spec(opts.hostfile or opts.cluster)
    except ConfigError as err:
        if opts.hostfile or opts.cluster:
            raise
        hint = "; ".join(h for h in (err.hint, tr("or run on this machine only: --local N")) if h)
        raise ConfigError(err.message, hint, setting=err.setting) from None
    hosts = tuple((h, int(s)) for h, s in parse_hostfile(spec.hostfile_text()))
    launcher = opts.launcher or spec.launcher
    if backends.known(launcher) and backends.get(launcher).allocates:
        return spec, slurm_hosts(opts, spec), launcher, Path(spec.shared_dir)
    if not (backends.known(launcher) and backends.get(launcher).over_ssh):
        raise ConfigError(tr("launcher {name!r} is not supported by dscluster launch", name=launcher),
                          tr("use launcher = \"pdsh\" (default), \"openmpi\" or \"slurm\""), setting="launcher")
    return spec, hosts, launcher, Path(spec.shared_dir)


def slurm_ask(opts: LaunchOptions, spec: Any | None):
    """The run's Slurm request: the options given, the spec's node count and slots otherwise."""
    from dscluster.launcher.slurm import SlurmAsk, check_ask

    given = opts.slurm or SlurmAsk(nodes=0, tasks_per_node=0)
    pick = slurm_selection(opts.runner)
    nodes = given.nodes or opts.runner.num_nodes or (len(pick["nodelist"].split(",")) if pick["nodelist"] else 0) \
        or (len(spec.nodes) if spec is not None else 1)
    per_node = given.tasks_per_node or opts.runner.num_gpus or (spec.nodes[0].slots if spec is not None else 1)
    return check_ask(SlurmAsk(nodes=nodes, tasks_per_node=per_node, partition=given.partition,
                              gpus_per_node=given.gpus_per_node, time=given.time, **pick))


def slurm_selection(flags: RunnerFlags) -> dict[str, str | None]:
    """DeepSpeed's --include / --exclude under `--launcher slurm`, as Slurm's own node selection
    ({"nodelist", "exclude"}: salloc's and sbatch's options, srun's inside an allocation). Slurm selects
    nodes, never a device of one: NODE:SLOT is refused, as are --num_nodes/--num_gpus that contradict
    --nodes/--ntasks-per-node (they become those otherwise)."""
    out: dict[str, str | None] = {"nodelist": None, "exclude": None}
    for flag, key, value in (("--include", "nodelist", flags.include), ("--exclude", "exclude", flags.exclude)):
        if value is None:
            continue
        specs = parse_node_specs(value, flag)
        slotted = [n for n, slots in specs.items() if slots is not None]
        if slotted:
            raise UsageError(tr("{flag} {value!r} under --launcher slurm: Slurm selects whole nodes, not the slots of "
                                "one ({names})", flag=flag, value=value, names=", ".join(slotted)),
                             tr("name whole nodes ({flag} {nodes}); Slurm binds each rank's devices itself "
                                "(--gpus-per-node)", flag=flag, nodes="@".join(specs)), setting=flag)
        out[key] = ",".join(specs)
    if flags.include is not None and flags.exclude is not None:
        raise UsageError(tr("--include and --exclude cannot be used together"),
                         tr("keep one of them (DeepSpeed refuses both too)"), setting="--include")
    return out


def check_slurm_counts(opts: LaunchOptions) -> None:
    """--num_nodes / --num_gpus under Slurm are --nodes / --ntasks-per-node; both given and different: refused."""
    given = opts.slurm
    for flag, value, own, name in (("--num_nodes", opts.runner.num_nodes, getattr(given, "nodes", 0), "--nodes"),
                                   ("--num_gpus", opts.runner.num_gpus, getattr(given, "tasks_per_node", 0),
                                    "--ntasks-per-node")):
        if value is not None and own and value != own:
            raise UsageError(tr("{flag} {value} and {name} {own} disagree (under Slurm they are the same setting)",
                                flag=flag, value=value, name=name, own=own), tr("keep one of them"), setting=flag)


def slurm_hosts(opts: LaunchOptions, spec: Any | None) -> tuple[tuple[str, int], ...]:
    """Inside an allocation: its nodes (SLURM_JOB_NODELIST) with the asked slots each. Outside one: none
    yet; the supervisor asks Slurm for the allocation and records its nodes."""
    from dscluster.launcher import slurm

    ask = slurm_ask(opts, spec)
    if slurm.current_job() and os.environ.get("SLURM_JOB_NODELIST"):
        hosts = tuple((h, ask.tasks_per_node) for h in slurm.hostnames(os.environ["SLURM_JOB_NODELIST"]))
        if ask.nodelist or ask.exclude:  # DeepSpeed's selection among the allocation's nodes
            hosts = select(hosts, RunnerFlags(include=opts.runner.include, exclude=opts.runner.exclude)).hosts
        return hosts
    return ()


def check_runner_flags(opts: LaunchOptions) -> None:
    """The runner flags that need no cluster to judge: refused ones, launcher, ports, contradictions."""
    flags = opts.runner
    check_refused(flags)
    check_launcher(opts.launcher)
    check_port(flags.master_port, "--master_port")
    check_port(flags.ssh_port, "--ssh_port")
    check_launcher_args(flags.launcher_args)
    if opts.launcher:
        backends.get(opts.launcher).check_local(opts.local)
    if flags.force_multi and opts.local is not None:
        raise UsageError(tr("--force_multi and --local contradict: --force_multi starts the ranks over ssh"),
                         tr("drop --force_multi to run on this machine only, or drop --local and pass --hostfile H"),
                         setting="--force_multi")


def _local_by_runner_flags(opts: LaunchOptions) -> LaunchOptions:
    """DeepSpeed without a hostfile runs on this machine: so does `dscluster launch --num_gpus N` or
    `--include localhost:0,1` when no --hostfile/--cluster is given and no cluster spec is found."""
    flags = opts.runner
    if opts.local is not None or opts.hostfile or opts.cluster:
        return opts
    localish = flags.include is not None and all(
        n in ("localhost", "127.0.0.1") for n in parse_node_specs(flags.include, "--include"))
    if not localish and flags.num_gpus is None:
        return opts
    if not localish:
        from dscluster.cluster.spec import resolve_spec

        try:
            resolve_spec(None)
            return opts  # a cluster is found: --num_gpus trims each of its nodes, as with a hostfile
        except ConfigError:
            pass
    from dataclasses import replace

    if localish:
        slots = {s for v in parse_node_specs(flags.include, "--include").values() for s in v or ()}
        return replace(opts, local=len(slots) or 1)
    return replace(opts, local=flags.num_gpus)


def apply_runner_flags(spec, hosts: tuple[tuple[str, int], ...], flags: RunnerFlags):
    """(hosts, the runner's --include or None) after --include/--exclude/--num_nodes/--num_gpus, with
    --master_addr and --ssh_port checked against the cluster."""
    import socket

    names = {}
    for n in spec.nodes:
        names[n.address] = n.name
        names[n.name] = n.name
    sel = select(hosts, flags, names)
    by_host = {n.name: n for n in spec.nodes}

    def resolve(addr: str) -> str | None:
        if addr in names:
            return names[addr]
        try:
            ip = socket.gethostbyname(addr)
        except (OSError, UnicodeError):
            return None
        return names.get(ip)

    label = {h: f"{h} ({by_host[h].address})" if h in by_host and by_host[h].address != h else h for h, _ in hosts}
    check_master_addr(flags.master_addr, sel.hosts, label, resolve)
    check_ssh_port(flags.ssh_port, {h: by_host[h].ssh_port if h in by_host else spec.ssh_port for h, _ in sel.hosts},
                   str(spec.path or spec.name))
    return sel.hosts, sel.include_arg()


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


def interpreters(spec, launcher: str, here: str) -> dict:
    """The run record's `python` (what the nodes run: the ranks, the supervisor's node channels) and,
    when it differs, `runner_python` (this machine's, which runs DeepSpeed's runner). A cluster spec's
    `python` names the nodes' interpreter, e.g. the node image's when launching from a controller
    outside the containers; without it the nodes run this interpreter's own path (DeepSpeed's default)."""
    node = getattr(spec, "python", None) if backends.get(launcher).nodes_python else None
    if not node or node == here:
        return {"python": here, "runner_python": None}
    return {"python": node, "runner_python": here}


def prepare(opts: LaunchOptions, *, dry_run: bool = False) -> Prepared:
    """Check everything and build the run record. A dry run writes nothing (no ssh files, no state)."""
    if not opts.command:
        raise UsageError(tr("nothing to launch"), tr("dscluster launch train.py --deepspeed --deepspeed_config ds.json"))
    check_supervision(opts)
    cwd = Path(opts.cwd or os.getcwd()).resolve()
    program, args = opts.command[0], list(opts.command[1:])
    python = sys.executable
    # DeepSpeed's .deepspeed_env files first, --env on top (the run's own DS_ENV_FILE carries both).
    ds_env_files = deepspeed_env_files(cwd)
    user_env = {**read_deepspeed_env(ds_env_files), **parse_env(opts.env)}
    flags = opts.runner
    check_runner_flags(opts)
    opts = _local_by_runner_flags(opts)
    spec, hosts, launcher, shared = resolve_target(opts)
    backend = backends.get(launcher)
    include, local_procs = None, None
    if spec is not None and backend.over_ssh:
        hosts, include = apply_runner_flags(spec, hosts, flags)
        if include is not None:
            backend.check_selection(include, "--include" if flags.include is not None else "--exclude")
    elif backend.allocates:
        check_slurm_counts(opts)
    elif spec is None:
        local_procs, include = select_local(opts.local, flags)
    world = sum(s for _, s in hosts) if hosts else int(local_procs or 1)
    if opts.slurm is not None and not backend.allocates:
        raise UsageError(tr("--partition, --nodes, --ntasks-per-node, --gpus-per-node, --time and --sbatch are "
                            "Slurm options, but the launcher is {name!r}", name=launcher),
                         tr("add --launcher slurm (or set launcher = \"slurm\" in the cluster spec)"),
                         setting="launcher")
    ask = slurm_ask(opts, spec) if backend.allocates else None
    if ask is not None and not hosts:
        world = ask.nodes * ask.tasks_per_node
    check_program(program, opts.module, cwd, python, flags.no_python)
    if opts.module and program == "dscluster.train":
        from dscluster.train.options import check_args  # noqa: PLC0415 - imports torch: only for this program

        check_args(args)
    check_repeated_options(args)
    from dscluster import batchplan

    excluded: list = []
    keep_batch = opts.keep_batch
    if opts.exclude_unhealthy:
        hosts, include, excluded, keep_batch = exclude_unhealthy(opts, spec, launcher, hosts, include, shared, args,
                                                                 cwd)
        world = sum(s for _, s in hosts)
    batch_plan = batchplan.plan(keep_batch, world) if keep_batch is not None and keep_batch.world != world else None
    ds_config = check_ds_config(args, cwd, world, batch_plan, opts.unwritten_configs)
    accelerate_ref = user_env.get(ACCELERATE_DS_ENV) if ds_config is None and batch_plan is None else None
    if accelerate_ref:
        ds_config = checked_config_file(accelerate_ref, cwd, world, auto_ok=True)
    builds = _first_run_builds(ds_config, user_env)
    from dscluster.runs.preflight import before_launch

    if not backend.allocates:  # under Slurm the checkpoints may live where this machine does not see them
        from dscluster.runs import diskspace

        # Room for the next checkpoint where the run will save: the last committed one's size there (a
        # restart's), else the reference trainer's estimate from its model size.
        diskspace.check_room(store.checkpoint_dir(store.run_path(shared, "new-run"), args, user_env, str(cwd)),
                             diskspace.reference_model_bytes(args) if opts.module and program == "dscluster.train"
                             else None)
    before_launch(spec, launcher, hosts, user_env, skip_doctor=opts.skip_doctor,
                  checked=opts.exclude_unhealthy and not opts.skip_doctor, dry_run=dry_run)
    name = opts.name or (program.rsplit(".", 1)[-1] if opts.module else Path(program).stem)
    if name in ("__main__", "main"):
        name = program.split(".")[-2] if opts.module and "." in program else "run"
    run_id = store.new_run_id(name)
    ranks_args, ds_config_text = with_monitor(args, ds_config, store.run_path(shared, run_id),
                                              reference=opts.module and program == "dscluster.train")
    if batch_plan is not None:
        ranks_args, ds_config_text = with_batch(args, ranks_args, ds_config_text, ds_config,
                                                store.run_path(shared, run_id), batch_plan)
    if accelerate_ref and ds_config_text is not None:  # the ranks' Accelerate reads the run's copy
        from dscluster.launcher.plan import RUN_DS_CONFIG

        user_env = {**user_env, ACCELERATE_DS_ENV: str(store.run_path(shared, run_id) / RUN_DS_CONFIG)}
    plain, secrets = split_secrets(user_env)
    # Inside an allocation, the step runs on the nodes --include/--exclude left (srun may pick any otherwise).
    srun_pick = (f"--nodelist={','.join(h for h, _ in hosts)}",) if ask is not None and hosts and \
        (ask.nodelist or ask.exclude) else ()
    slurm_cfg = None
    if ask is not None:
        from dataclasses import asdict

        from dscluster.launcher import slurm

        job = slurm.current_job() if hosts else None
        slurm_cfg = {"ask": asdict(ask), "job_id": job, "own_job": False}
    nodes_side: dict[str, Any] = {}
    if spec is not None and backend.over_ssh:
        from dscluster.runs.nodes import transport_env

        nodes_side = {
            "transport_env": transport_env(spec, launcher, write=not dry_run),
            # The spec's node_uid (the node image's user, recorded by `up`) when the nodes are containers;
            # else the UID of a local user of that name (bare metal with shared accounts, the simulation).
            "node_uid": spec.node_uid if getattr(spec, "node_uid", None) else _local_uid(spec.ssh_user),
            # The spec as resolved here, recorded once: the supervisor (cwd "/"), stop, logs and restart
            # reach the nodes through it, never by resolving `cluster_arg` again (another directory, an
            # edited hostfile).
            "cluster_spec": pinned(spec),
        }
    launch = LaunchSpec(
        program=program, is_module=opts.module, args=tuple(args), hosts=tuple(hosts), launcher=launcher,
        **{k: v for k, v in interpreters(spec, launcher, python).items() if v is not None}, cwd=str(cwd), env=plain,
        cluster_arg=str(spec.path) if spec is not None and spec.path else (opts.hostfile or opts.cluster),
        local_procs=int(local_procs or 1), max_restarts=int(opts.max_restarts),
        stall_timeout=float(opts.stall_timeout or 0), heartbeat_timeout=float(opts.heartbeat_timeout),
        restart_wait=float(opts.restart_wait), allow_shrink=bool(opts.allow_shrink),
        exclude_unhealthy=bool(opts.exclude_unhealthy),
        ssh_port=getattr(spec, "ssh_port", None), network_interface=getattr(spec, "network_interface", None),
        ds_config_text=ds_config_text, rank_args=tuple(ranks_args) if ds_config_text else None, include=include,
        master_port=flags.master_port, no_python=flags.no_python, no_local_rank=flags.no_local_rank,
        launcher_args=tuple(check_launcher_args(flags.launcher_args)) + srun_pick, runner_flags=flags.passed, slurm=slurm_cfg,
        **{k: v for k, v in DEFAULTS.items() if k not in ("max_restarts", "stall_timeout", "heartbeat_timeout",
                                                                "restart_wait")},
        **nodes_side, present=frozenset({"allow_shrink"}))
    record = RunRecord(
        id=run_id, launch=launch, name=name, argv=tuple(redact_argv((["-m"] if opts.module else []) + [program] + args)),
        script=program, cluster=getattr(spec, "name", "local"),
        hostfile="".join(f"{h} slots={s}\n" for h, s in hosts) or None, world_size=world,
        ds_config=ds_config, first_run_builds=builds, env=redact_env(user_env), git_commit=git_commit(cwd),
        cwd=str(cwd), created=store.now_iso(),  # the supervisor's hand-off carries it too
        deepspeed_env={"files": [str(p) for p in ds_env_files],
                       "names": sorted(read_deepspeed_env(ds_env_files))} if ds_env_files else None,
        batch_plan={**batch_plan.to_dict(), "text": batch_plan.describe()} if batch_plan is not None else None,
        excluded=tuple(e.to_dict() for e in excluded))
    return Prepared(record, secrets, shared, spec)


def exclude_unhealthy(opts: LaunchOptions, spec, launcher: str, hosts, include: str | None, shared: Path,
                      args: list[str], cwd: Path):
    """--exclude-unhealthy: (hosts, include, the excluded nodes, the batch to keep). The recorded evidence
    first (runs/exclude.py), then doctor's fast checks on the nodes that remain, again after each node
    they leave out (the master may change), so the pre-flight that follows has nothing left to ask."""
    from dscluster import batchplan
    from dscluster.runs import exclude
    from dscluster.runs.shrink import include_without

    exclude.check_target(spec, launcher)
    found = exclude.find(spec, shared)
    kept = exclude.without(spec, hosts, found)
    while not opts.skip_doctor:
        bad = exclude.preflight(spec, kept)
        if not bad:
            break
        found += bad
        kept = exclude.without(spec, kept, bad)
    keep = opts.keep_batch
    if found and keep is None:  # the global batch the ds_config gives on every node, kept where it divides
        full = check_ds_config(args, cwd, sum(s for _, s in hosts))
        keep = batchplan.Batch.of_config(full, sum(s for _, s in hosts)) if full else None
    lost = [h for h, _ in hosts if h not in {k for k, _ in kept}]
    return kept, include_without(include, lost), found, keep


def _first_run_builds(ds_config: dict[str, Any] | None, env: dict[str, str]) -> dict[str, Any] | None:
    """The DeepSpeed ops the ranks will compile before their first step, as this machine's cache shows
    (None: none). Never fails a launch: it only tells the user why the first steps will wait."""
    from dscluster.launcher import ops  # noqa: PLC0415

    try:
        missing = ops.first_run_builds(ds_config, env)
        return {"ops": [s.name for s in missing], "builders": [s.need.builder for s in missing],
                "accelerator": ops.accelerator_name()} if missing else None
    except Exception:  # noqa: BLE001 - an unimportable or odd DeepSpeed: the ranks will say so themselves
        return None


def first_run_notice(record: RunRecord) -> str | None:
    """The notice for a run whose ranks compile ops first (launch prints it; status while no step is done)."""
    from dscluster.launcher import ops  # noqa: PLC0415

    builds = record.first_run_builds
    if not isinstance(builds, dict) or not builds.get("ops"):
        return None
    cluster = None if backends.get(record.launch.launcher).on_this_machine else record.launch.cluster_arg
    return ops.first_run_notice(list(builds["ops"]), str(builds.get("accelerator") or "cpu"), cluster)


def _local_uid(user: str) -> int | None:
    import pwd

    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None


def dry_run_text(prep: Prepared) -> str:
    """The exact commands and files a launch would use (port: the one the first node would be asked for)."""
    c = prep.record.launch
    run_dir = store.run_path(prep.shared, prep.record.id)
    hosts = c.hosts
    slurm_lines = []
    if backends.get(c.launcher).allocates and not hosts:
        from dscluster.launcher.slurm import SlurmAsk, salloc_argv

        ask = SlurmAsk(**c.slurm["ask"])
        hosts = tuple((f"NODE{i + 1}", ask.tasks_per_node) for i in range(ask.nodes))
        slurm_lines = [tr("# first, the allocation (its nodes replace NODE1..NODE{n} below):", n=ask.nodes),
                       shlex.join(salloc_argv(ask, prep.record.id))]
    # What the runner reads is written to the launching user's own directory (dscluster.trust.runner_dir),
    # shown here by its path only: a dry run creates nothing.
    req = c.request(1, 29500, run_id=prep.record.id, run_dir=run_dir, hosts=hosts, secrets=prep.secrets,
                    files_dir=trust.runner_dir_path(prep.record.id))
    plan = build_plan(req)
    from dscluster.dsconfig import auto_note

    auto = auto_note(dict(prep.record.ds_config), prep.record.world_size or 1) \
        if isinstance(prep.record.ds_config, dict) else None
    lines = [*([f"# {auto}"] if auto else []), tr("# run directory: {path}", path=run_dir),
             tr("# master port: a random free port per attempt (29500 shown)"),
             *slurm_lines, "cd " + shlex.quote(c.cwd)]
    lines.append(" ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(redact_env(plan.env).items())) + " \\")
    lines.append("  " + shlex.join(redact_argv(plan.argv)))
    for path, text in plan.shown_files():
        lines += ["", f"# {path}", text.rstrip("\n")]
    return "\n".join(lines)
