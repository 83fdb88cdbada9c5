"""Launch, stop and restart requests from the panel: parse, validate, then hand to the supervisor.

The request is checked completely (fields, the DeepSpeed config against the cluster's world size)
before anything starts, so a bad form answers 400 with the message naming the setting. Starting is
`dscluster.runs.launch_run`, which spawns a detached supervisor; the Jupyter server never runs
training itself, and a server restart does not touch running jobs.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path

from dscluster import paths
from dscluster.errors import ConfigError, DsclusterError, UsageError
from dscluster.fsutil import atomic_write_text
from dscluster.i18n import tr
from dscluster.jupyter import clusterview, rundata

MAX_RESTARTS_LIMIT = 50
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")

# What the panel's form starts with: the built-in trainer, tiny preset, a few steps. It runs anywhere.
DEMO_ARGS = ["--preset", "tiny", "--steps", "30", "--log-interval", "1", "--save-interval", "10",
             "--sample-tokens", "40"]
DEMO_CONFIG = {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}


class SupervisorMissing(DsclusterError):
    http_status = 503


@dataclass
class LaunchRequest:
    program: str
    module: bool = False
    args: list[str] = field(default_factory=list)
    config: dict | None = None  # inline DeepSpeed config; None: the args name one, or the trainer builds one
    config_path: str | None = None
    cluster: str | None = None
    nprocs: int | None = None  # processes on this machine when no cluster is given or found
    max_restarts: int = 0
    name: str | None = None
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)  # for every rank (secret-looking names masked)
    launcher: str | None = None  # the spec's by default
    stall_timeout: float | None = None  # None: the launcher's defaults
    restart_wait: float | None = None
    allow_shrink: bool = False
    hosts: tuple[str, ...] = ()  # node names of the cluster spec to run on (restart --hosts); () = all
    keep_batch: object | None = None  # batchplan.Batch of the run a restart continues


def form_defaults(view: clusterview.ClusterView) -> dict:
    return {
        "script": "-m dscluster.train",
        "args": shlex.join(DEMO_ARGS),
        "config": json.dumps(DEMO_CONFIG, indent=2),
        "cluster": view.spec_path or "",
        "cluster_name": view.name,
        "max_restarts": 1,
    }


def _load_config(value: object) -> tuple[dict | None, str | None]:
    """`config` is a JSON object, JSON text, a path to a JSON file, or empty (none)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if isinstance(value, dict):
        return value, None
    if not isinstance(value, str):
        raise UsageError(tr("'config' must be DeepSpeed config JSON or a path"),
                         tr('e.g. {{"train_micro_batch_size_per_gpu": 8}}, or the path of a ds_config.json'),
                         setting="config")
    text = value.strip().removeprefix("\ufeff")
    if text.startswith("{"):  # inline text is read as DeepSpeed reads a file: JSON, or hjson
        from dscluster import dsconfig  # noqa: PLC0415

        try:
            return dsconfig.parse(text, "config"), None
        except ConfigError as err:
            raise ConfigError(err.message, err.hint, setting="config") from None
    return None, text


def _int_field(body: dict, key: str, default: int | None, lo: int, hi: int) -> int | None:
    value = body.get(key, default)
    if value is None or value == "":
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise UsageError(tr("{key!r} must be a whole number from {lo} to {hi}", key=key, lo=lo, hi=hi),
                         tr("e.g. {key}={lo}", key=key, lo=lo), setting=key)
    return value


LAUNCH_FIELDS = ("script", "args", "config", "cluster", "nprocs", "max_restarts", "name", "env")


def checked_env(env: object) -> dict[str, str]:
    """`env` of a launch or restart (HTTP body or Python API): names to string values, the names under
    the CLI's own --env rules. None is no variables."""
    from dscluster.launcher.prepare import parse_env  # noqa: PLC0415

    if env is None:
        return {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ConfigError(tr("env must be an object (dict) of names to string values"),
                          tr('e.g. {{"OMP_NUM_THREADS": "4", "HF_TOKEN": "..."}}'), setting="env")
    return parse_env([f"{k}={v}" for k, v in env.items()])


def parse_launch(body: dict, cwd: str | None = None) -> LaunchRequest:
    """Check the request's shape; the content (program, cluster, config) is checked by `prepare`."""
    unknown = sorted(k for k in body if k not in LAUNCH_FIELDS)
    if unknown:
        # A misspelt field silently ignored would launch something else than what was asked for.
        import difflib  # noqa: PLC0415

        close = difflib.get_close_matches(unknown[0], LAUNCH_FIELDS, n=1)
        raise UsageError(tr("unknown field {key!r} in the launch request", key=unknown[0]),
                         (tr("did you mean {m!r}? ", m=close[0]) if close else "")
                         + tr("the fields are: {fields}", fields=", ".join(LAUNCH_FIELDS)), setting=unknown[0])
    env = checked_env(body.get("env"))
    script = body.get("script")
    if script is not None and not isinstance(script, str):
        raise UsageError(tr("'script' must be a string, got {t}", t=type(script).__name__),
                         tr("give the training script path, or -m MODULE"), setting="script")
    if not script or not script.strip():
        raise UsageError(tr("'script' is missing"), tr("give the training script path, or -m MODULE"),
                         setting="script")
    script = script.strip()
    module = script == "-m" or script.startswith("-m ")
    program = script[3:].strip() if module else script
    if module and not program:
        raise UsageError(tr("'-m' needs a module name"), tr("e.g. -m dscluster.train"), setting="script")
    args = body.get("args", [])
    if isinstance(args, str):
        try:
            args = shlex.split(args)
        except ValueError as exc:
            raise UsageError(tr("cannot split 'args': {err}", err=str(exc)), tr("check the quotes"),
                             setting="args") from None
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise UsageError(tr("'args' must be a list of strings or one string"),
                         tr("e.g. args=['--steps', '100'] or args='--steps 100'"), setting="args")
    name = body.get("name") or None
    if name is not None and (not isinstance(name, str) or not _NAME.match(name)):
        raise UsageError(tr("'name' may use letters, digits, '.', '_' and '-' (at most 40)"),
                         tr("e.g. name='gpt-1.3b'"), setting="name")
    cluster = body.get("cluster") or None
    if cluster is not None and not isinstance(cluster, str):
        raise UsageError(tr("'cluster' must be a path or a cluster name"),
                         tr("e.g. cluster='dscluster.toml', or leave it out for the default"), setting="cluster")
    config, config_path = _load_config(body.get("config"))
    return LaunchRequest(program=program, module=module, args=args, config=config, config_path=config_path,
                         cluster=cluster.strip() if cluster else None,
                         nprocs=_int_field(body, "nprocs", None, 1, 64),
                         max_restarts=_int_field(body, "max_restarts", 0, 0, MAX_RESTARTS_LIMIT),
                         name=name, cwd=cwd, env=env)


def _default_spec_exists() -> bool:
    try:
        from dscluster.cluster.spec import resolve_spec

        resolve_spec(None)
        return True
    except (ImportError, DsclusterError):
        return False


def _config_file(shared: Path, config: dict) -> Path:
    """Inline configs are stored content-addressed on shared storage, where every node can read them."""
    text = json.dumps(config, indent=2, sort_keys=True) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = Path(shared) / "configs" / f"ds_config-{digest}.json"
    if not path.exists():
        atomic_write_text(path, text)
    return path


def _options(request: LaunchRequest):
    from dscluster.launcher.prepare import LaunchOptions, find_ds_config

    local = None
    shared = None
    if not request.cluster and (request.nprocs or not _default_spec_exists()):
        local = request.nprocs or 1
        shared = paths.local_shared()
    args = list(request.args)
    if find_ds_config(args) is None and (request.config is not None or request.config_path):
        if request.config is not None:
            if shared is None:
                from dscluster.cluster.spec import resolve_spec

                shared = Path(resolve_spec(request.cluster).shared_dir)
            ref = str(_config_file(shared, request.config))
        else:
            ref = request.config_path
        args += (["--deepspeed"] if "--deepspeed" not in args else []) + ["--deepspeed_config", ref]
    tuning = {k: v for k, v in (("stall_timeout", request.stall_timeout), ("restart_wait", request.restart_wait))
              if v is not None}
    from dscluster.launcher.runnerflags import RunnerFlags

    return LaunchOptions(command=[request.program, *args], module=request.module, cluster=request.cluster,
                         local=local, name=request.name, max_restarts=request.max_restarts, cwd=request.cwd,
                         env=[f"{k}={v}" for k, v in request.env.items()], launcher=request.launcher,
                         allow_shrink=request.allow_shrink, keep_batch=request.keep_batch,
                         runner=RunnerFlags(include="@".join(request.hosts) if request.hosts else None), **tuning)


def prepare(request: LaunchRequest):
    """Everything `dscluster launch` checks (program, cluster, DeepSpeed config, doctor's fast checks)."""
    try:
        from dscluster.launcher.prepare import prepare as prepare_launch
    except ImportError:
        raise SupervisorMissing(tr("the launcher (dscluster.launcher) is not available in this install"),
                                tr("reinstall dscluster")) from None
    return prepare_launch(_options(request))


def launch(request: LaunchRequest) -> str:
    prepared = prepare(request)
    from dscluster.runs import launch_run

    return launch_run(prepared.shared, prepared.record, prepared.secrets)


def stop(ref: rundata.RunRef) -> dict:
    """Ask the supervisor to stop (graceful teardown), then make sure in the background (forced)."""
    record = rundata.run_record(ref)
    status = record.get("status")
    if status in ("succeeded", "failed", "stopped"):
        return {"id": ref.id, "status": status, "stopping": False}
    from dscluster.runs.control import request_stop, stop_run

    request_stop(ref.path, record)
    threading.Thread(target=_stop_quietly, args=(stop_run, ref.path), name=f"stop-{ref.id}", daemon=True).start()
    return {"id": ref.id, "status": status, "stopping": True}


def _stop_quietly(stop_run, run_dir: Path) -> None:
    try:
        stop_run(run_dir)
    except Exception:  # noqa: BLE001 - logged by the supervisor; the panel shows the record's status
        pass


class RunBusy(DsclusterError):
    """The request is valid but a running run is in the way (HTTP 409)."""


def _runs_saving_to(shared: Path, save_dir: Path) -> list[str]:
    from dscluster.runs import store
    from dscluster.runs.start import shown_status

    return [r["id"] for r in store.list_runs(shared)
            if shown_status(r) in store.ACTIVE and store.save_dir(Path(r["_dir"]), r) == save_dir]


def restart(ref: rundata.RunRef, env: dict[str, str] | None = None, hostfile: str | None = None,
            local: int | None = None, hosts: str | None = None) -> str:
    """A new run with the old one's program, args, cluster, environment and supervision settings, resuming
    from the old run's newest committed checkpoint (its save dir is passed on; the trainer's --resume auto
    picks it). Secret values were never recorded: pass them again in `env`. `hostfile` (or `local`, a
    process count on this machine) runs it elsewhere, e.g. on the nodes that remain after one is lost for
    good: a step saved by another number of ranks is resumed through DeepSpeed's universal format.
    `hosts` ("node1,node3") picks nodes of the run's cluster spec by name. On another world size the
    global batch is kept where it divides (dscluster.batchplan), else the new one is said plainly."""
    from dscluster.runs import shrink

    if sum(1 for v in (hostfile, local, hosts) if v) > 1:
        raise UsageError(tr("--hosts, --hostfile and --local name different places to restart on"),
                         tr("give one of them"), setting="--hosts" if hosts else "--hostfile")
    record = rundata.run_record(ref)
    cfg = record.get("launch") or {}
    if hosts and (cfg.get("launcher") in ("local", "slurm") or not cfg.get("cluster_arg")):
        raise UsageError(tr("--hosts picks nodes of a cluster spec, but run {run_id} ran {where}", run_id=ref.id,
                            where=tr("on this machine only") if cfg.get("launcher") == "local" else
                            tr("under Slurm") if cfg.get("launcher") == "slurm" else tr("without a cluster spec")),
                         tr("use --local N, or --hostfile H"), setting="--hosts")
    picked = shrink.restart_hosts(hosts, cfg.get("cluster_arg")) if hosts else ()
    busy = _runs_saving_to(ref.path.parent.parent, rundata.save_dir(ref, record))
    if busy:
        # Two runs saving to one directory overwrite each other's steps; the second must wait.
        raise RunBusy(tr("run {busy} is still running and saves to the same checkpoints", busy=", ".join(busy)),
                      tr("wait for it to finish, or stop it first: dscluster stop {busy}", busy=busy[0]),
                      setting="run_id")
    if not cfg.get("program"):
        raise ConfigError(tr("run {run_id} has no recorded program to restart", run_id=ref.id),
                          tr("launch it again from the form"), setting="run_id")
    args = list(cfg.get("args") or [])
    trainer = cfg.get("is_module") and cfg["program"] == "dscluster.train"
    if trainer and not any(a == "--save-dir" or a.startswith("--save-dir=") for a in args):
        # The reference trainer's flag; a user's own script resumes from wherever its args already say.
        args += ["--save-dir", str(rundata.save_dir(ref, record))]
    local = local or (cfg.get("local_procs") if cfg.get("launcher") == "local" and not hostfile else None)
    recorded_env = cfg.get("env") if isinstance(cfg.get("env"), dict) else {}
    if not trainer:
        # A user's script finds its checkpoints through dscluster.checkpoint's DSCLUSTER_CHECKPOINT_DIR:
        # the new run continues from the old run's committed steps, as the trainer does with --save-dir.
        recorded_env = {"DSCLUSTER_CHECKPOINT_DIR": str(rundata.save_dir(ref, record)), **recorded_env}
    masked = record.get("env") if isinstance(record.get("env"), dict) else {}
    missing = sorted(k for k in masked if k not in recorded_env and k not in (env or {}))
    if missing:
        # The old run had these secrets; a new run without them would fail later, far from the cause.
        names = ", ".join(missing)
        raise UsageError(tr("run {run_id} was given secret values that are never recorded: {names}", run_id=ref.id,
                            names=names),
                         tr("give them again: dscluster restart {run_id} {flags} (from your environment), or "
                            "Run.restart(env={{...}})", run_id=ref.id, flags=" ".join(f"--env {k}" for k in missing)),
                         setting="env")
    request = LaunchRequest(program=cfg["program"], module=bool(cfg.get("is_module")), args=args,
                            cluster=None if local else (hostfile or cfg.get("cluster_arg")), nprocs=local,
                            max_restarts=int(cfg.get("max_restarts") or 0), name=record.get("name"),
                            cwd=cfg.get("cwd"), env={**recorded_env, **(env or {})},
                            launcher=None if local or cfg.get("launcher") == "local" else cfg.get("launcher"),
                            stall_timeout=cfg.get("stall_timeout"), restart_wait=cfg.get("restart_wait"),
                            allow_shrink=bool(cfg.get("allow_shrink")), hosts=picked,
                            keep_batch=shrink.batch_to_keep(record, rundata.save_dir(ref, record)))
    if cfg.get("launcher") == "slurm" and isinstance(cfg.get("slurm"), dict):
        return _restart_on_slurm(request, cfg["slurm"], bool((record.get("slurm") or {}).get("batch")))
    return launch(request)


def _restart_on_slurm(request: LaunchRequest, slurm_cfg: dict, batch: bool) -> str:
    """The same Slurm request again: a new batch job for a batch run (resubmitted, e.g. after its time
    limit), else a new allocation (or the one this process runs in)."""
    import dataclasses

    from dscluster.launcher.prepare import prepare as prepare_launch
    from dscluster.launcher.slurm import SlurmAsk

    prepared = prepare_launch(dataclasses.replace(_options(request), slurm=SlurmAsk(**slurm_cfg["ask"])))
    if batch:
        from dscluster.runs.slurm_run import submit_run

        prepared.record["launch"]["hosts"] = []
        prepared.record["launch"]["slurm"]["job_id"] = None
        return submit_run(prepared.shared, prepared.record, prepared.secrets)[0]
    from dscluster.runs import launch_run

    return launch_run(prepared.shared, prepared.record, prepared.secrets)
