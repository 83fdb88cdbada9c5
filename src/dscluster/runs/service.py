"""The runs service: the one way a run is started, restarted and stopped, whatever view asked.

`dscluster launch`, `dscluster demo`, `dscluster restart`, the Python API (`dscluster.launch`,
`Run.restart`) and the JupyterLab panel each parse their own input into one `runs.records.request.RunRequest`,
then call `start`, `launch`, `restart` or `stop` here. Every start passes through `runs.preparing.prepare.prepare`, so
each one gets the same checks (program, cluster, ds_config for the real world size, doctor's fast checks
on the nodes or, on this machine, the stale DeepSpeed JIT lock) and the same run record.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dscluster import fsutil, paths
from dscluster.errors import ConfigError, DsclusterError, UsageError
from dscluster.i18n import tr
from dscluster.launcher import backends
from dscluster.launcher.runnerflags import RunnerFlags
from dscluster.runs.leases import leasing
from dscluster.runs.leases.rules import WAITING
from dscluster.runs.preparing.prepare import Prepared, prepare
from dscluster.runs.preparing.program import find_ds_config
from dscluster.runs.records import store
from dscluster.runs.records.owner import check_may_control, check_may_restart
from dscluster.runs.records.record import RunRecord
from dscluster.runs.records.request import RunRequest
from dscluster.runs.records.verify import record_to_act_on
from dscluster.runs.supervising.nodes import recorded_spec

INLINE_CONFIGS = Path("data") / "ds_configs"  # under the shared directory: every node reads the same file
# A request's inline config (the panel's form, a notebook's dict) in its own run directory: the launching
# person writes there (a shared folder may be root's), every node reads it, a restart reads it again.
GIVEN_DS_CONFIG = "ds_config.given.json"


@dataclass(frozen=True)
class Started:
    """A run that was started: its id and directory, and the prepared record it was started with."""

    run_id: str
    run_dir: Path
    prepared: Prepared


def start(request: RunRequest) -> Started:
    """Check everything (`prepare`), write the run record and start its detached supervisor."""
    from dscluster.runs.preparing.start import launch_run

    opts = resolved(request)
    begun = time.monotonic()
    prepared = prepare(opts)  # the checks (the preflight's ssh to every node among them)
    checks_s = round(time.monotonic() - begun, 2)
    # The run's GPUs, taken before anything starts: refused when another run holds them, or queued (--wait).
    claim = leasing.claim_at_launch(prepared.record, prepared.shared, wait=opts.gpus.wait)
    if claim is not None and claim.state == WAITING:
        prepared = dataclasses.replace(prepared, record=prepared.record.replace(status=leasing.QUEUED))
    try:
        run_id = launch_run(prepared.shared, prepared.record, prepared.secrets, files=given_files(opts),
                            checks_s=checks_s)
    except BaseException:
        leasing.release(prepared.record, prepared.shared)
        raise
    return Started(run_id, store.run_path(prepared.shared, run_id), prepared)


def inline_ds_config(shared: Path, config: dict[str, Any], prefix: str = "ds_config", *, write: bool = True) -> Path:
    """An inline DeepSpeed config (the demo's, a panel form's, a notebook's dict) as a file on shared storage,
    named by its content: every node reads the same file, and a rerun with the same config reuses it. A dry
    run (`write=False`) only names it: prepare reads the config from Carried.unwritten_configs."""
    text = json.dumps(config, indent=2, sort_keys=True) + "\n"
    path = Path(shared) / INLINE_CONFIGS / f"{prefix}-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
    if write and not _reusable(path, text):
        if path.exists() or path.is_symlink():
            # Named by its content, so anyone who can write data/ds_configs (the node user, another person)
            # could place a different file there first: never reuse one that is not ours alone and
            # exactly this config, write our own beside it instead.
            path = path.with_name(f"{path.stem}-{secrets.token_hex(4)}.json")
        fsutil.atomic_write_text(path, text)
    return path


def _reusable(path: Path, text: str) -> bool:
    """Whether an existing inline config file is this config, a plain file of ours (or root's) that no one else
    can write, read by descriptor (no symlink followed)."""
    try:
        fd = fsutil.open_file(path)
        entry = os.lstat(path)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if (entry.st_dev, entry.st_ino) != (st.st_dev, st.st_ino) or st.st_uid not in (os.geteuid(), 0) \
                or st.st_mode & 0o022 or st.st_nlink != 1:
            return False
        return f.read(len(text.encode()) + 1) == text.encode()


def given_files(opts: RunRequest) -> dict[str, str]:
    """The inline configs `resolved` named inside the run's own directory: name -> text, written when the
    directory is made (store.create_run)."""
    carried = opts.carried
    if carried.run_id is None or not carried.unwritten_configs:
        return {}
    return {Path(path).name: json.dumps(config, indent=2, sort_keys=True) + "\n"
            for path, config in carried.unwritten_configs.items() if Path(path).parent.name == carried.run_id}


def _default_spec_exists() -> bool:
    from dscluster.cluster.spec import resolve_spec

    try:
        resolve_spec(None)
        return True
    except DsclusterError:
        return False


def resolved(request: RunRequest) -> RunRequest:
    """The request as `prepare` takes it: on this machine (`local`, 1 by default) when it may be
    (`here_by_default`) and no cluster is given or found; an inline config (or `config_path`) passed as
    `--deepspeed_config` unless the args name one, the inline one read from the run's own directory."""
    place, prog = request.place, request.program
    if place.here_by_default:
        # A launcher named (a restart's of a scheduler's run without a spec included) is never this machine.
        here = not place.cluster and not place.launcher and place.cluster_spec is None and (
            place.local or not _default_spec_exists())
        request = request.but(local=(place.local or 1) if here else None, here_by_default=False)
    if find_ds_config(list(prog.args)) is not None or (prog.config is None and not prog.config_path):
        return request
    if prog.config is None:
        return request.but(args=_with_config(prog.args, prog.config_path), config_path=None)
    if request.place.local:
        shared = paths.local_shared()
    else:
        from dscluster.cluster.spec import resolve_spec

        shared = Path((place.cluster_spec or resolve_spec(place.cluster)).shared_dir)
    from dscluster.runs.preparing.prepare import run_name  # noqa: PLC0415

    run_id = store.new_run_id(run_name(prog.name, prog.program, prog.module))
    ref = str(store.run_path(shared, run_id) / GIVEN_DS_CONFIG)
    # Read from here by prepare; written with the run directory (given_files).
    return request.but(args=_with_config(prog.args, ref), config=None, run_id=run_id,
                       unwritten_configs={ref: prog.config})


def _with_config(args: tuple[str, ...], ref: str) -> tuple[str, ...]:
    return (*args, *(["--deepspeed"] if "--deepspeed" not in args else []), "--deepspeed_config", ref)


def prepare_request(request: RunRequest) -> Prepared:
    """Everything `dscluster launch` checks, for a request (the panel's "check" button)."""
    return prepare(resolved(request))


def launch(request: RunRequest) -> str:
    """Start a request; returns the run id."""
    return start(request).run_id


# ---- stop --------------------------------------------------------------------------------------------
def stop(run_dir: Path) -> dict[str, Any]:
    """Ask the supervisor to stop (graceful teardown), then make sure in the background (forced).
    Returns at once: {id, status, stopping}."""
    record = store.read_record(run_dir)
    status = record.status
    if status in store.FINISHED:
        return {"id": record.id, "status": status, "stopping": False}
    verified = record_to_act_on(run_dir)  # by descriptor, written by its owner or root (runs/records/verify.py)
    record = verified.record
    check_may_control(record, run_dir, "stop")  # its owner, or root (runs/records/owner.py)
    from dscluster.runs.supervising.control import request_stop, stop_run

    request_stop(run_dir, verified)
    threading.Thread(target=_stop_quietly, args=(stop_run, run_dir), name=f"stop-{record.id}",
                     daemon=True).start()
    return {"id": record.id, "status": status, "stopping": True}


def _stop_quietly(stop_run, run_dir: Path) -> None:
    try:
        stop_run(run_dir)
    except Exception:  # noqa: BLE001 - logged by the supervisor; the views show the record's status
        pass


# ---- restart -----------------------------------------------------------------------------------------
class RunBusy(DsclusterError):
    """The request is valid but a running run is in the way (HTTP 409)."""


def runs_saving_to(shared: Path, save_dir: Path) -> list[str]:
    """The active runs that write their checkpoints into `save_dir`."""
    from dscluster.runs.preparing.start import shown_status

    return [r.id for r in store.list_runs(shared)
            if shown_status(r.record) in store.ACTIVE and store.save_dir(r.dir, r.record) == save_dir]


def restart_flags(given: RunnerFlags, picked: tuple[str, ...], *, same_place: bool) -> RunnerFlags:
    """The runner flags a restart asks with: the run's own, as given at launch. On the nodes it ran on they
    are all kept (the same --include/--exclude/--num_nodes/--num_gpus select the same ranks); `picked`
    (--hosts) replaces the choice of nodes, keeping --num_gpus; on another place (--hostfile, --local) the
    flags that name the old cluster's nodes, addresses or ports go, the ones about the program stay."""
    if not same_place:
        return RunnerFlags(no_python=given.no_python, no_local_rank=given.no_local_rank, passed=given.passed)
    if picked:
        return dataclasses.replace(given, include="@".join(picked), exclude=None, num_nodes=None, master_addr=None)
    return given


def _check_no_run_saves_to(run_dir: Path, save_dir: Path) -> None:
    busy = runs_saving_to(run_dir.parent.parent, save_dir)
    if busy:
        # Two runs saving to one directory overwrite each other's steps; the second must wait.
        raise RunBusy(tr("run {busy} is still running and saves to the same checkpoints", busy=", ".join(busy)),
                      tr("wait for it to finish, or stop it first: dscluster stop {busy}", busy=busy[0]),
                      setting="run_id")


def restart_request(run_dir: Path, env: dict[str, str] | None = None, hostfile: str | None = None,
                    local: int | None = None, hosts: str | None = None) -> tuple[RunRequest, RunRecord]:
    """The request that restarts a run (see `restart`), and the old run's record. It runs on the cluster
    recorded at launch (nodes, ports, identity), unless `hostfile`, `local` or `hosts` names another place."""
    from dscluster.runs.preparing import shrink

    if sum(1 for v in (hostfile, local, hosts) if v) > 1:
        raise UsageError(tr("--hosts, --hostfile and --local name different places to restart on"),
                         tr("give one of them"), setting="--hosts" if hosts else "--hostfile")
    run_dir = Path(run_dir)
    record = record_to_act_on(run_dir).record  # by descriptor, written by its owner or root (runs/records/verify.py)
    check_may_restart(record, run_dir)  # its owner, or root; a person's run as that person (runs/records/owner.py)
    run_id = record.id
    cfg = record.launch
    # The cluster as recorded at launch, read back through the spec parser (runs.supervising.nodes.recorded_spec);
    # None for a local or Slurm run, or a record from before the spec was recorded.
    launched_on = recorded_spec(record) if cfg.cluster_spec is not None else None
    backend = cfg.backend
    if hosts and (not backend.over_ssh or not (launched_on or cfg.cluster_arg)):
        raise UsageError(tr("--hosts picks nodes of a cluster spec, but run {run_id} ran {where}", run_id=run_id,
                            where=backend.where() or tr("without a cluster spec")),
                         tr("use --local N, or --hostfile H"), setting="--hosts")
    # An old record names its spec by path only: recorded_spec reads that path again.
    picked = shrink.restart_hosts(hosts, launched_on or recorded_spec(record)) if hosts else ()
    save_dir = store.save_dir(run_dir, record)
    _check_no_run_saves_to(run_dir, save_dir)
    if not cfg.program:
        raise ConfigError(tr("run {run_id} has no recorded program to restart", run_id=run_id),
                          tr("launch it again from the form"), setting="run_id")
    args = list(cfg.args)
    trainer = cfg.reference_trainer
    if trainer and not any(a == "--save-dir" or a.startswith("--save-dir=") for a in args):
        # The reference trainer's flag; a user's own script resumes from wherever its args already say.
        args += ["--save-dir", str(save_dir)]
    moved = bool(hostfile or local)  # the person names another place than the run's own
    local = local or (cfg.local_procs if backend.on_this_machine and not hostfile else None)
    if local:
        from dscluster import trust

        trust.check_local_restart(run_dir, run_id)  # the program runs here, as the launching user
    recorded_env = dict(cfg.env)
    if not trainer:
        # A user's script finds its checkpoints through dscluster.checkpoint's DSCLUSTER_CHECKPOINT_DIR:
        # the new run continues from the old run's committed steps, as the trainer does with --save-dir.
        recorded_env = {"DSCLUSTER_CHECKPOINT_DIR": str(save_dir), **recorded_env}
    _check_secrets_given(record, recorded_env, env)
    request = RunRequest.of(
        program=cfg.program, module=cfg.is_module, args=args, name=record.name, cwd=cfg.cwd,
        env=[f"{k}={v}" for k, v in {**recorded_env, **(env or {})}.items()],
        cluster=None if local else (hostfile or cfg.cluster_arg), local=local, here_by_default=True,
        launcher=None if local or backend.on_this_machine else cfg.launcher,
        cluster_spec=None if local or hostfile else launched_on, exclude_unhealthy=cfg.exclude_unhealthy,
        runner=restart_flags(cfg.runner, picked, same_place=not moved),
        keep_batch=shrink.batch_to_keep(record, save_dir), share_gpus=cfg.share_gpus)
    request = dataclasses.replace(request, supervision=cfg.supervision)  # the run's policy, as recorded
    return request, record


def _check_secrets_given(record: RunRecord, recorded_env: Mapping[str, str], env: Mapping[str, str] | None) -> None:
    """The old run had secrets (recorded by name only): a new run without them would fail later, far from
    the cause, so they must be given again."""
    missing = sorted(k for k in record.env if k not in recorded_env and k not in (env or {}))
    if missing:
        names = ", ".join(missing)
        raise UsageError(tr("run {run_id} was given secret values that are never recorded: {names}", run_id=record.id,
                            names=names),
                         tr("give them again: dscluster restart {run_id} {flags} (from your environment), or "
                            "Run.restart(env={{...}})", run_id=record.id,
                            flags=" ".join(f"--env {k}" for k in missing)), setting="env")


def restart(run_dir: Path, env: dict[str, str] | None = None, hostfile: str | None = None,
            local: int | None = None, hosts: str | None = None) -> str:
    """A new run with the old one's program, args, cluster, environment and supervision settings, resuming
    from the old run's newest committed checkpoint (its save dir is passed on; the trainer's --resume auto
    picks it). Secret values were never recorded: pass them again in `env`. `hostfile` (or `local`, a
    process count on this machine) runs it elsewhere, e.g. on the nodes that remain after one is lost for
    good: a step saved by another number of ranks is resumed through DeepSpeed's universal format.
    `hosts` ("node1,node3") picks nodes of the run's cluster spec by name. On another world size the
    global batch is kept where it divides (dscluster.batchplan), else the new one is said plainly."""
    request, record = restart_request(run_dir, env, hostfile, local, hosts)
    cfg = record.launch
    asked = cfg.backend.recorded_request(cfg.scheduler)  # the scheduler's request, as recorded
    if asked is not None:
        return _restart_asking(request, asked, bool((record.scheduler or {}).get("batch")))
    return launch(request)


def _restart_asking(request: RunRequest, asked: Any, batch: bool) -> str:
    """The same scheduler request again: a new batch job for a batch run (resubmitted, e.g. after its time
    limit), else a new allocation (or the one this process runs in)."""
    opts = dataclasses.replace(request, scheduler=asked)
    return submit(opts).run_id if batch else start(opts).run_id


@dataclass(frozen=True)
class Submitted(Started):
    """A run submitted as a scheduler's batch job that supervises it from inside the job."""

    job_id: str = ""


def prepare_batch(opts: RunRequest) -> Prepared:
    """`prepare` for a batch job of the backend whose request the options carry (a backend's batch option): the
    job's own nodes are known only once it starts."""
    owner = backends.owner(opts.scheduler)
    opts = resolved(opts).but(launcher=owner.name)  # the request: the options given, else the spec's
    prepared = prepare(opts)
    launch = prepared.record.launch
    launch = dataclasses.replace(launch, hosts=(), scheduler=owner.batch_record(launch.scheduler))
    return dataclasses.replace(prepared, record=prepared.record.replace(launch=launch))


def batch_preview(prepared: Prepared) -> list[str]:
    """What a batch job's dry run shows before the commands: its script."""
    record = prepared.record
    return record.launch.backend.batch_preview(record, store.run_path(prepared.shared, record.id),
                                              _supervisor_module())


def _supervisor_module() -> str:
    """The supervisor's module, as a batch job starts it (`python -I -m MODULE --handoff FILE RUN_DIR`)."""
    from dscluster.runs.supervising import supervisor

    return supervisor.__name__


def submit(opts: RunRequest) -> Submitted:
    """Check everything, write the run and submit it as its backend's batch job."""
    opts = resolved(opts)
    prepared = prepare_batch(opts)
    record = prepared.record
    backend = record.launch.backend
    run_dir = store.create_run(prepared.shared, record, given_files(opts))
    job, said = backend.submit_batch(record, run_dir, prepared.secrets or {}, _supervisor_module())
    store.update_record(run_dir, store.read_record(run_dir), scheduler=said)
    store.append_event(run_dir, f"{backend.name}-submitted", job_id=job)
    return Submitted(record.id, run_dir, prepared, str(job))
