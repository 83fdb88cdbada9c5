"""Where a run runs: this machine, a cluster spec's nodes (DeepSpeed's runner flags applied: --include,
--exclude, --num_nodes, --num_gpus, --master_addr, --ssh_port), or a scheduler's allocation; with
--exclude-unhealthy, without the nodes the evidence points to. `place` is the typed answer."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dscluster import paths
from dscluster.errors import ConfigError, UsageError
from dscluster.i18n import tr
from dscluster.launcher import backends
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
from dscluster.runs.preparing.program import check_ds_config
from dscluster.runs.records.request import RunRequest


@dataclass(frozen=True)
class Placement:
    """Where a run runs: the cluster spec (None: this machine, or a scheduler without one), the hosts with their
    slots in rank order (empty: this machine, or an allocation not made yet), the launcher backend,
    the shared directory its runs live in, and what narrows it."""

    spec: Any | None
    hosts: tuple[tuple[str, int], ...]
    backend: backends.Backend  # resolved once from its name (--launcher, else the spec's) and carried
    shared: Path
    include: str | None = None  # the runner's --include: devices other than 0..n-1 of a host
    local_procs: int | None = None  # ranks on this machine (the local backend)
    ask: Any | None = None  # the backend's `request`: what the scheduler is asked for (the backend's own type)
    excluded: tuple = ()  # runs.preparing.exclude's findings: the nodes --exclude-unhealthy left out

    @property
    def launcher(self) -> str:
        """The backend's name, as the run record keeps it."""
        return self.backend.name

    @property
    def world(self) -> int:
        if self.hosts:
            return sum(s for _, s in self.hosts)
        if self.ask is not None:
            return self.ask.ranks
        return int(self.local_procs or 1)


def place(opts: RunRequest) -> Placement:
    """Where the request puts the run: the target resolved, DeepSpeed's runner flags applied to its hosts
    (or to this machine's devices), the scheduler's request built, each refused with its setting."""
    spec, hosts, backend, shared = resolve_target(opts)
    where, flags = Placement(spec, hosts, backend, shared), opts.runner
    if spec is not None and backend.over_ssh:
        hosts, include = apply_runner_flags(spec, hosts, flags)
        if include is not None:
            backend.check_selection(include, "--include" if flags.include is not None else "--exclude")
        where = replace(where, hosts=tuple(hosts), include=include)
    elif backend.allocates:
        backend.check_request(opts)
    elif spec is None:
        local_procs, include = select_local(opts.place.local, flags)
        where = replace(where, local_procs=local_procs, include=include)
    if opts.scheduler is not None and not backend.owns(opts.scheduler):
        backends.owner(opts.scheduler).refuse_request(backend.name)
    return replace(where, ask=backend.request(opts, spec)) if backend.allocates else where


def resolve_target(opts: RunRequest) -> tuple[Any | None, tuple[tuple[str, int], ...], backends.Backend, Path]:
    """(spec or None, hosts, backend, shared dir) for the request: the backend's name (--launcher, else the
    spec's) is resolved here, once."""
    at = opts.place
    if at.local is not None:
        if at.local < 1:
            raise UsageError(tr("--local needs a number of processes >= 1"), tr("e.g. --local 2"))
        return None, (), backends.get("local"), paths.local_shared()
    from dscluster.cluster.hostfile import parse_hostfile
    from dscluster.cluster.spec import resolve_spec

    requested = backends.get(at.launcher) if at.launcher else None  # check_runner_flags checked the name
    if requested is not None and requested.allocates and not (at.hostfile or at.cluster):
        try:
            spec = resolve_spec(None)
        except ConfigError:  # a scheduler's cluster needs no dscluster spec: runs go to DSCLUSTER_SHARED
            return None, requested.allocated_hosts(opts, None), requested, paths.local_shared()
        return spec, requested.allocated_hosts(opts, spec), requested, Path(spec.shared_dir)
    try:
        spec = at.cluster_spec if at.cluster_spec is not None else resolve_spec(at.hostfile or at.cluster)
    except ConfigError as err:
        if at.hostfile or at.cluster:
            raise
        hint = "; ".join(h for h in (err.hint, tr("or run on this machine only: --local N")) if h)
        raise ConfigError(err.message, hint, setting=err.setting) from None
    hosts = tuple((h, int(s)) for h, s in parse_hostfile(spec.hostfile_text()))
    launcher = at.launcher or spec.launcher
    backend = requested or (backends.get(launcher) if backends.known(launcher) else None)
    if backend is not None and backend.allocates:
        return spec, backend.allocated_hosts(opts, spec), backend, Path(spec.shared_dir)
    if backend is None or not backend.over_ssh:
        raise ConfigError(tr("launcher {name!r} is not supported by dscluster launch", name=launcher),
                          tr("use launcher = one of {names} (default: {default})",
                             names=", ".join(f'"{n}"' for n in backends.spec_names()), default=backends.DEFAULT),
                          setting="launcher")
    return spec, hosts, backend, Path(spec.shared_dir)


def check_runner_flags(opts: RunRequest) -> None:
    """The runner flags that need no cluster to judge: refused ones, launcher, ports, contradictions."""
    flags, at = opts.runner, opts.place
    check_refused(flags)
    requested = check_launcher(at.launcher)
    check_port(flags.master_port, "--master_port")
    check_port(flags.ssh_port, "--ssh_port")
    check_launcher_args(flags.launcher_args)
    if requested is not None:
        requested.check_local(at.local)
    if flags.force_multi and at.local is not None:
        raise UsageError(tr("--force_multi and --local contradict: --force_multi starts the ranks over ssh"),
                         tr("drop --force_multi to run on this machine only, or drop --local and pass --hostfile H"),
                         setting="--force_multi")


def local_by_runner_flags(opts: RunRequest) -> RunRequest:
    """DeepSpeed without a hostfile runs on this machine: so does `dscluster launch --num_gpus N` or
    `--include localhost:0,1` when no --hostfile/--cluster is given and no cluster spec is found."""
    flags, at = opts.runner, opts.place
    if at.local is not None or at.hostfile or at.cluster:
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
    if localish:
        slots = {s for v in parse_node_specs(flags.include, "--include").values() for s in v or ()}
        return opts.but(local=len(slots) or 1)
    return opts.but(local=flags.num_gpus)


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


def interpreters(spec, backend: backends.Backend, here: str) -> dict:
    """The run record's `python` (what the nodes run: the ranks, the supervisor's node channels) and,
    when it differs, `runner_python` (this machine's, which runs DeepSpeed's runner). A cluster spec's
    `python` names the nodes' interpreter, e.g. the node image's when launching from a controller
    outside the containers; without it the nodes run this interpreter's own path (DeepSpeed's default)."""
    node = getattr(spec, "python", None) if backend.nodes_python else None
    if not node or node == here:
        return {"python": here, "runner_python": None}
    return {"python": node, "runner_python": here}


def exclude_unhealthy(opts: RunRequest, where: Placement, args: list[str], cwd: Path):
    """--exclude-unhealthy: (the placement without the unhealthy nodes, the batch to keep). The recorded
    evidence first (runs/preparing/exclude.py), then doctor's fast checks on the nodes that remain, again after each
    node they leave out (the master may change), so the pre-flight that follows has nothing left to ask."""
    from dscluster import batchplan
    from dscluster.runs.preparing import exclude
    from dscluster.runs.preparing.shrink import include_without

    spec, hosts = where.spec, where.hosts
    exclude.check_target(spec, where.backend)
    found = exclude.find(spec, where.shared)
    kept = exclude.without(spec, hosts, found)
    while not opts.place.skip_doctor:
        bad = exclude.preflight(spec, kept)
        if not bad:
            break
        found += bad
        kept = exclude.without(spec, kept, bad)
    keep = opts.carried.keep_batch
    if found and keep is None:  # the global batch the ds_config gives on every node, kept where it divides
        full = check_ds_config(args, cwd, sum(s for _, s in hosts))
        keep = batchplan.Batch.of_config(full, sum(s for _, s in hosts)) if full else None
    lost = [h for h, _ in hosts if h not in {k for k, _ in kept}]
    return replace(where, hosts=tuple(kept), include=include_without(where.include, lost),
                   excluded=tuple(found)), keep


def local_uid(user: str) -> int | None:
    import pwd

    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return None
