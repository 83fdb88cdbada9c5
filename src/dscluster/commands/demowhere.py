"""Where `dscluster demo` runs (commands/demo.py): this machine, a simulated cluster (`--nodes N`, brought
up when none runs) or a cluster spec, and the commands that address it afterwards (`closing_hints`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dscluster.console import runnable
from dscluster.errors import PermissionNeeded, UsageError
from dscluster.i18n import tr
from dscluster.paths import local_shared


@dataclass(frozen=True)
class Target:
    """Where the demo runs: a spec path (None: this machine), its shared directory, and for a
    simulated cluster the flags that make `runs`/`status`/`logs` and `sim ...` address it."""

    cluster: str | None
    shared: Path
    sim_name: str | None = None
    nodes: int = 0
    runs_flag: str = ""  # " --cluster SPEC" when plain `dscluster runs` would read another cluster
    sim_flag: str = ""  # " --name X" for a simulated cluster other than "default"


def _sim_target(n: int, name: str, dry_run: bool = False) -> Target:
    """The simulated cluster `resolve_spec` picks ("default"): used if it runs with N nodes, started
    with N nodes when none runs. Another size is refused: recreating it would kill its runs."""
    if n < 1:
        raise UsageError(tr("--nodes must be at least 1"), tr("e.g. --nodes 2"))
    if os.geteuid() != 0:
        raise PermissionNeeded(tr("a simulated cluster needs root (network namespaces)"),
                               tr("run as root, or drop --nodes to train on this machine"))
    from dscluster.errors import ClusterError  # noqa: PLC0415
    from dscluster.sim import SimCluster  # noqa: PLC0415

    flag = "" if name == "default" else f" --name {name}"
    try:
        sim = SimCluster.attach(name)
    except ClusterError:
        sim = None
    if sim is not None and len(sim.nodes) != n:
        raise UsageError(
            tr("the simulated cluster {name!r} is running with {k} nodes, not {n}", name=name, k=len(sim.nodes), n=n),
            tr("use it as it is: dscluster demo --nodes {k}; or recreate it: dscluster sim down{flag} && "
               "dscluster demo --nodes {n}", k=len(sim.nodes), n=n, flag=flag), setting="--nodes")
    if sim is None and dry_run:
        raise UsageError(tr("--dry-run starts nothing, and no simulated cluster {name!r} is running", name=name),
                         tr("start it first: dscluster sim up {n}{flag}", n=n, flag=flag), setting="--nodes")
    if sim is None:
        print(tr("starting a simulated {n}-node cluster {name!r}...", n=n, name=name), flush=True)
        sim = SimCluster.up(name, n)
    down = [node for node in sim.nodes if not sim.is_running(node)]
    if down:
        raise ClusterError(tr("simulated node {nodes} is down", nodes=", ".join(down)),
                              " && ".join(f"dscluster sim heal{flag} {node}" for node in down), node=down[0])
    return Target(str(sim.spec_path), Path(sim.spec.shared_dir), name, n, _runs_flag(sim.spec_path), flag)


def _runs_flag(spec_path: Path) -> str:
    """Nothing when `dscluster runs` (resolve_spec without --cluster) finds this cluster by itself."""
    from dscluster.cluster.spec import resolve_spec  # noqa: PLC0415
    from dscluster.errors import ConfigError  # noqa: PLC0415

    try:
        picked = resolve_spec(None).path
    except ConfigError:
        picked = None
    same = picked is not None and Path(picked).resolve() == Path(spec_path).resolve()
    return "" if same else f" --cluster {spec_path}"


def demo_target(args) -> Target:
    """Where `dscluster demo` runs: --nodes (simulated), --cluster/--hostfile, else this machine."""
    if args.nodes is not None:
        return _sim_target(args.nodes, args.sim_name or "default", args.dry_run)
    if args.cluster or args.hostfile:
        from dscluster.cluster.spec import resolve_spec  # noqa: PLC0415

        spec = resolve_spec(args.cluster or args.hostfile)
        return Target(args.cluster or args.hostfile, Path(spec.shared_dir), runs_flag=f" --cluster {args.cluster or args.hostfile}")
    return Target(None, local_shared())


def closing_hints(target: Target, run_id: str) -> list[str]:
    """Commands that work for the cluster the run used, as typed (no extra flags needed for the default)."""
    if target.sim_name is None:
        return [f"dscluster runs{target.runs_flag}",
                "python -m dscluster.train --help",
                "dscluster demo --nodes 3   # as root: rehearse a multi-node run on a simulated cluster"]
    n, sim = target.nodes, target.sim_flag
    crash = [f"dscluster demo --nodes {n}{sim} --steps 2000 --detach   # again, in the background...",
             f"dscluster sim crash{sim} node1 && {runnable(f'dscluster sim heal{sim} node1')}   # ...a node dies and comes back: "
             "the supervisor tears down and restarts"] if n > 1 else []
    return [f"dscluster runs{target.runs_flag}", f"dscluster logs {run_id}{target.runs_flag}", *crash,
            f"dscluster sim down{sim}"]
