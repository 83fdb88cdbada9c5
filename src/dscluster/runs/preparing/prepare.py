"""Everything checked before anything starts on any node, and the run record it produces.

`prepare` is a sequence of named steps, each raising a typed error that names the setting and the fix:
the options on their own (`_request`) -> the program's environment (runs/preparing/program.py) -> where the run
runs (runs/preparing/target.py `place`: the cluster spec / hostfile, DeepSpeed's runner flags, a scheduler's request)
-> the program exists -> --exclude-unhealthy -> the ds_config for the real world size (`_config`) ->
room for a checkpoint and doctor's fast checks (`_preflight`) -> the files the ranks read
(`_ranks_files`) -> the record's `launch` (`_launch_spec`).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dscluster import trust
from dscluster.errors import UsageError
from dscluster.i18n import tr
from dscluster.launcher.plan import build_plan
from dscluster.launcher.redact import redact_argv, redact_env, split_secrets
from dscluster.launcher.runnerflags import (
    check_launcher_args,
)
from dscluster.runs.preparing.program import (
    ACCELERATE_DS_ENV,
    check_ds_config,
    check_program,
    check_repeated_options,
    checked_config_file,
    first_run_builds,
    git_commit,
    program_env,
    with_batch,
    with_monitor,
)
from dscluster.runs.preparing.target import (
    Placement,
    check_runner_flags,
    exclude_unhealthy,
    interpreters,
    local_by_runner_flags,
    local_uid,
    place,
)
from dscluster.runs.records import store
from dscluster.runs.records.owner import current_user
from dscluster.runs.records.record import LaunchSpec, RunRecord, is_reference_trainer, pinned
from dscluster.runs.records.request import RunRequest, check_supervision


@dataclass
class Prepared:
    record: RunRecord
    secrets: dict[str, str]
    shared: Path
    spec: Any | None


def prepare(opts: RunRequest, *, dry_run: bool = False) -> Prepared:
    """Check everything and build the run record. A dry run writes nothing (no ssh files, no state).
    Each step raises a typed error naming the setting and the fix."""
    opts, cwd, program, args = _request(opts)
    env = program_env(cwd, opts.program.env)
    where = place(opts)
    _check_program(opts, program, args, cwd)
    keep_batch = opts.carried.keep_batch
    if opts.place.exclude_unhealthy:
        where, keep_batch = exclude_unhealthy(opts, where, args, cwd)
    config = _config(args, cwd, where.world, keep_batch, env.values, opts.carried.unwritten_configs)
    _preflight(opts, where, program, args, cwd, env.values, dry_run)
    run_id, name = _run_id(opts, program)
    ranks = _ranks_files(opts, program, args, config, store.run_path(where.shared, run_id), env.values)
    plain, secrets = split_secrets(ranks.env)
    launch = _launch_spec(opts, where, program, args, cwd, ranks, plain, dry_run)
    record = RunRecord(
        id=run_id, launch=launch, name=name, argv=tuple(redact_argv((["-m"] if opts.program.module else []) + [program] + args)),
        script=program, cluster=getattr(where.spec, "name", "local"),
        hostfile="".join(f"{h} slots={s}\n" for h, s in where.hosts) or None, world_size=where.world,
        ds_config=config.ds_config, first_run_builds=first_run_builds(config.ds_config, env.values),
        env=redact_env(ranks.env), git_commit=git_commit(cwd),
        cwd=str(cwd), created=store.now_iso(),  # the supervisor's hand-off carries it too
        deepspeed_env={"files": [str(p) for p in env.files], "names": sorted(env.from_files)} if env.files else None,
        batch_plan={**config.batch_plan.to_dict(), "text": config.batch_plan.describe()}
        if config.batch_plan is not None else None,
        excluded=tuple(e.to_dict() for e in where.excluded), owner=current_user())
    return Prepared(record, secrets, where.shared, where.spec)


def _request(opts: RunRequest) -> tuple[RunRequest, Path, str, list[str]]:
    """The options checked on their own (no cluster needed): (options, cwd, program, its args). DeepSpeed's
    `--num_gpus N` or `--include localhost:...` without a cluster means this machine (`--local`)."""
    if not opts.program.program:
        raise UsageError(tr("nothing to launch"), tr("dscluster launch train.py --deepspeed --deepspeed_config ds.json"))
    check_supervision(opts.supervision)
    check_runner_flags(opts)
    cwd = Path(opts.program.cwd or os.getcwd()).resolve()
    return local_by_runner_flags(opts), cwd, opts.program.program, list(opts.program.args)


def _check_program(opts: RunRequest, program: str, args: list[str], cwd: Path) -> None:
    """The program exists (as this interpreter would find it); the reference trainer's own arguments are
    checked here, before anything starts; no option is given twice with different values."""
    check_program(program, opts.program.module, cwd, sys.executable, opts.runner.no_python)
    if is_reference_trainer(program, opts.program.module):
        from dscluster.train.options import check_args  # noqa: PLC0415 - imports torch: only for this program

        check_args(args)
    check_repeated_options(args)


@dataclass(frozen=True)
class RunConfig:
    """The ds_config the ranks get: as the user wrote it (checked for the real world size), the batch plan
    that keeps another world size's global batch, and the Accelerate config file it came from (if so)."""

    ds_config: dict[str, Any] | None
    batch_plan: Any | None  # dscluster.batchplan.BatchPlan
    accelerate_ref: str | None


def _config(args: list[str], cwd: Path, world: int, keep_batch, env: Mapping[str, str],
            unwritten: Mapping[str, Any] | None) -> RunConfig:
    from dscluster import batchplan

    batch_plan = batchplan.plan(keep_batch, world) if keep_batch is not None and keep_batch.world != world else None
    ds_config = check_ds_config(args, cwd, world, batch_plan, unwritten)
    accelerate_ref = env.get(ACCELERATE_DS_ENV) if ds_config is None and batch_plan is None else None
    if accelerate_ref:
        ds_config = checked_config_file(accelerate_ref, cwd, world, auto_ok=True)
    return RunConfig(ds_config, batch_plan, accelerate_ref)


def _preflight(opts: RunRequest, where: Placement, program: str, args: list[str], cwd: Path,
               env: Mapping[str, str], dry_run: bool) -> None:
    """Room for the next checkpoint where the run will save, then runs.preparing.preflight.before_launch."""
    from dscluster.runs.preparing.preflight import before_launch

    if not where.backend.allocates:  # under Slurm the checkpoints may live where this machine does not see them
        from dscluster.runs.preparing import diskspace

        # The last committed checkpoint's size there (a restart's), else the reference trainer's estimate.
        diskspace.check_room(store.checkpoint_dir(store.run_path(where.shared, "new-run"), args, dict(env), str(cwd)),
                             diskspace.reference_model_bytes(args) if is_reference_trainer(program, opts.program.module) else None)
    before_launch(where.spec, where.backend, where.hosts, env, skip_doctor=opts.place.skip_doctor,
                  checked=opts.place.exclude_unhealthy and not opts.place.skip_doctor, dry_run=dry_run)


def run_name(name: str | None, program: str, module: bool) -> str:
    """A run's name: --name, else the script's stem or the module's last part."""
    name = name or (program.rsplit(".", 1)[-1] if module else Path(program).stem)
    if name in ("__main__", "main"):
        name = program.split(".")[-2] if module and "." in program else "run"
    return name


def _run_id(opts: RunRequest, program: str) -> tuple[str, str]:
    """(run id, name): the id chosen beforehand (RunRequest.run_id), else a new one from the name."""
    name = run_name(opts.program.name, program, opts.program.module)
    return opts.carried.run_id or store.new_run_id(name), name


@dataclass(frozen=True)
class RanksFiles:
    """What the ranks read that dscluster writes: their args (pointing at the run's ds_config), that
    ds_config's text (None: the user's own, unchanged), and their environment."""

    args: list[str]
    ds_config_text: str | None
    env: dict[str, str]


def _ranks_files(opts: RunRequest, program: str, args: list[str], config: RunConfig, run_dir: Path,
                 env: Mapping[str, str]) -> RanksFiles:
    ranks_args, text = with_monitor(args, config.ds_config, run_dir, reference=is_reference_trainer(program, opts.program.module))
    if config.batch_plan is not None:
        ranks_args, text = with_batch(args, ranks_args, text, config.ds_config, run_dir, config.batch_plan)
    env = dict(env)
    if config.accelerate_ref and text is not None:  # the ranks' Accelerate reads the run's copy
        from dscluster.launcher.plan import RUN_DS_CONFIG

        env[ACCELERATE_DS_ENV] = str(run_dir / RUN_DS_CONFIG)
    return RanksFiles(ranks_args, text, env)


def _launch_spec(opts: RunRequest, where: Placement, program: str, args: list[str], cwd: Path,
                 ranks: RanksFiles, plain_env: dict[str, str], dry_run: bool) -> LaunchSpec:
    """The run record's `launch`: everything the supervisor needs to start every attempt."""
    spec, hosts, ask, flags = where.spec, where.hosts, where.ask, opts.runner
    backend = where.backend
    return LaunchSpec(
        program=program, is_module=opts.program.module, args=tuple(args), hosts=tuple(hosts), launcher=where.launcher,
        **{k: v for k, v in interpreters(spec, backend, sys.executable).items() if v is not None},
        cwd=str(cwd), env=plain_env,
        cluster_arg=str(spec.path) if spec is not None and spec.path else (opts.place.hostfile or opts.place.cluster),
        local_procs=int(where.local_procs or 1), supervision=opts.supervision,
        exclude_unhealthy=bool(opts.place.exclude_unhealthy), share_gpus=bool(opts.gpus.share_gpus),
        ssh_port=getattr(spec, "ssh_port", None), network_interface=getattr(spec, "network_interface", None),
        ds_config_text=ranks.ds_config_text, rank_args=tuple(ranks.args) if ranks.ds_config_text else None,
        include=where.include, runner=flags,
        launcher_args=tuple(check_launcher_args(flags.launcher_args)) + (backend.allocation_args(ask, hosts)
                                                                         if ask is not None else ()),
        scheduler=backend.request_record(ask, hosts) if ask is not None else None,
        **_nodes_side(where, dry_run), present=frozenset({"allow_shrink"}))


def _nodes_side(where: Placement, dry_run: bool) -> dict[str, Any]:
    """For a backend that reaches the nodes over ssh: its transport environment, the node user's UID, and
    the spec as resolved here, recorded once: the supervisor (cwd "/"), stop, logs and restart reach the
    nodes through it, never by resolving `cluster_arg` again (another directory, an edited hostfile)."""
    spec = where.spec
    if spec is None or not where.backend.over_ssh:
        return {}
    from dscluster.runs.supervising.nodes import transport_env

    return {"transport_env": transport_env(spec, where.backend, write=not dry_run),
            # The spec's node_uid (the node image's user, recorded by `up`) when the nodes are containers;
            # else the UID of a local user of that name (bare metal with shared accounts, the simulation).
            "node_uid": spec.node_uid if getattr(spec, "node_uid", None) else local_uid(spec.ssh_user),
            "cluster_spec": pinned(spec)}


def first_run_notice(record: RunRecord) -> str | None:
    """The notice for a run whose ranks compile ops first (launch prints it; status while no step is done)."""
    from dscluster.launcher import ops  # noqa: PLC0415

    builds = record.first_run_builds
    if not isinstance(builds, dict) or not builds.get("ops"):
        return None
    cluster = None if record.launch.backend.on_this_machine else record.launch.cluster_arg
    return ops.first_run_notice(list(builds["ops"]), str(builds.get("accelerator") or "cpu"), cluster)


def dry_run_text(prep: Prepared) -> str:
    """The exact commands and files a launch would use (port: the one the first node would be asked for)."""
    c = prep.record.launch
    run_dir = store.run_path(prep.shared, prep.record.id)
    hosts = c.hosts
    asking_lines = []
    backend = c.backend
    if backend.allocates and not hosts:
        hosts, asking_lines = backend.allocation_preview(backend.recorded_request(c.scheduler), prep.record.id)
    # What the runner reads is written to the launching user's own directory (dscluster.trust.runner_dir),
    # shown here by its path only: a dry run creates nothing.
    req = c.request(1, 29500, run_id=prep.record.id, run_dir=run_dir, hosts=hosts, secrets=prep.secrets,
                    files_dir=trust.runner_dir_path(prep.record.id))
    plan = build_plan(req)
    from dscluster.runs.preparing.program import auto_note

    auto = auto_note(dict(prep.record.ds_config), prep.record.world_size or 1) \
        if isinstance(prep.record.ds_config, dict) else None
    lines = [*([f"# {auto}"] if auto else []), tr("# run directory: {path}", path=run_dir),
             tr("# master port: a random free port per attempt (29500 shown)"),
             *asking_lines, "cd " + shlex.quote(c.cwd)]
    lines.append(" ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(redact_env(plan.env).items())) + " \\")
    lines.append("  " + shlex.join(redact_argv(plan.argv)))
    for path, text in plan.shown_files():
        lines += ["", f"# {path}", text.rstrip("\n")]
    return "\n".join(lines)
