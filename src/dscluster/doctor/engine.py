"""run_doctor: one probe per node in parallel, then every check on every node, then the report.

Wall time is about one ssh round trip plus the probe (about a second), whatever the number of
nodes: the probes run concurrently and every cross-node test happens inside them (see
probe_script.py). Every remote call has a deadline, so a dead or partitioned node costs at most
`timeout` seconds and is reported, never waited on forever.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from dscluster.cluster.runner import Runner, run_parallel
from dscluster.doctor import checks_cluster as cc
from dscluster.doctor import checks_node as cn
from dscluster.doctor.context import DoctorContext
from dscluster.doctor.model import CHECKS, CheckResult, Report
from dscluster.doctor.probe import ProbeParams, run_probe
from dscluster.launcher import backends

DEFAULT_MASTER_PORT = 29500
WAIT_S = 5.0  # how long the probes wait for each other (shared-dir nonce, master port)
FAST_WAIT_S = 3.0

CheckFn = Callable[[DoctorContext, Any], CheckResult]
PER_NODE: dict[str, CheckFn] = {
    "reach": cc.check_reach, "names": cc.check_names, "python": cn.check_python, "versions": cn.check_versions,
    "slots": cn.check_slots, "shared": cc.check_shared, "shm": cn.check_shm, "port": cc.check_port,
    "clock": cc.check_clock, "launcher": cn.check_launcher, "jit-lock": cc.check_jit_lock,
    "cuda-arch": cn.check_cuda_arch, "iface": cc.check_iface,
}
assert tuple(["ssh", *PER_NODE]) == CHECKS, "keep PER_NODE in the table's column order"


def default_runners(spec) -> tuple[list[Runner], list[str]]:
    """SSHRunners over the cluster's ssh_config, and the nodes whose published host key no longer
    matches the pinned one (ssh will refuse them; doctor says why)."""
    from dscluster.cluster.ssh import SSHRunner, ensure_ssh_files

    sync = ensure_ssh_files(spec)
    return [SSHRunner(spec, n) for n in spec.nodes], list(sync.changed)


def run_doctor(spec, fast: bool = False, collective: bool = False, *, master_port: int = DEFAULT_MASTER_PORT,
               runners: Sequence[Runner] | None = None, python: str | None = None,
               wait_s: float | None = None, timeout: float | None = None,
               collective_mb: float | None = None, slow_fraction: float | None = None,
               remember: bool = True) -> Report:
    """Check every node of `spec` in parallel and return the Report (never raises for a sick node).

    fast: shorter waits, for `launch`'s pre-flight. collective: also run a real all-reduce across
    every slot (gloo on CPU, NCCL on GPU) and report the bus bandwidth, each node's and link's
    bandwidth (named when below slow_fraction of the median or of the cluster's baseline) and, on GPU
    nodes, the transport NCCL chose. remember: keep each node's verdict (doctor/health.py, what
    `launch --exclude-unhealthy` reads) and the bandwidth baseline in this user's state dir.
    runners: one Runner per node in spec order (default: SSHRunner with the cluster's ssh_config).
    python: the interpreter the launcher will use on every node (default: the spec's `python`, else this one).
    """
    started = time.time()
    wait_s = wait_s if wait_s is not None else (FAST_WAIT_S if fast else WAIT_S)
    timeout = timeout if timeout is not None else wait_s + 10.0
    python = python or getattr(spec, "python", None) or sys.executable
    hostkey_changed: list[str] = []
    if runners is None:
        runners, hostkey_changed = default_runners(spec)
    runners = list(runners)
    names = [n.name or n.address for n in spec.nodes]
    token = secrets.token_hex(12)
    node_list = tuple({"name": nm, "address": n.address, "ssh_port": n.ssh_port} for nm, n in zip(names, spec.nodes))
    backend = backends.get(spec.launcher)  # the spec's name, resolved once: the probe's tools, the checks
    tools = backend.node_tools  # what the backend's own check reads, besides the usual

    def params(i: int) -> ProbeParams:
        return ProbeParams(node=names[i], is_master=i == 0, expected_python=python, nodes=node_list,
                           peers=tuple(names[1:]), master_address=spec.nodes[0].address, master_port=master_port,
                           shared_dir=str(spec.shared_dir), token=token, wait_s=wait_s, launcher=spec.launcher,
                           tools=tools)

    # Every probe must run at once (no pool limit): the master waits only wait_s for the others' acks.
    outcomes = run_parallel(lambda i: run_probe(runners[i], python, params(i), timeout=timeout), range(len(names)),
                            max_workers=max(1, len(names)))
    ctx = DoctorContext(spec=spec, outcomes={o.node: o for o in outcomes}, master_port=master_port,
                        expected_python=python, wait_s=wait_s, local_env=dict(os.environ),
                        hostkey_changed=hostkey_changed, backend=backend)
    results = evaluate(ctx)
    summary = summarize(ctx)
    if collective:
        from dscluster.doctor.bandwidth import DEFAULT_FRACTION
        from dscluster.doctor.collective import run_collective

        more = run_collective(ctx, runners, python, results, size_mb=collective_mb, baseline=remember,
                              fraction=slow_fraction or DEFAULT_FRACTION)
        results += more
        summary["collective"] = more[0].details
    report = Report(cluster=getattr(spec, "name", "?"), nodes=names, results=results,
                    elapsed_s=time.time() - started, summary=summary)
    if remember:
        from dscluster.doctor import health

        health.remember(spec, report)
    return report


def evaluate(ctx: DoctorContext) -> list[CheckResult]:
    """Every check on every node, in table order. Pure: unit tests feed it fake probe facts."""
    results: list[CheckResult] = []
    for node in ctx.spec.nodes:
        results.append(cc.check_ssh(ctx, node))
        reachable = ctx.facts(node) is not None
        for check, fn in PER_NODE.items():
            if check == "reach":  # judged from the master's side: meaningful even if this node is down
                results.append(fn(ctx, node))
            elif reachable:
                results.append(_guarded(fn, ctx, node, check))
            else:
                results.append(cn.skip_unreachable(ctx, node, check))
    return results


def _guarded(fn: CheckFn, ctx: DoctorContext, node, check: str) -> CheckResult:
    """A bug in one check (odd probe data) must not hide the other checks."""
    try:
        return fn(ctx, node)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        from dscluster.doctor.model import failed
        from dscluster.i18n import tr

        return failed(ctx.node_name(node), check, tr("internal error in this check: {err!r}", err=err),
                      tr("report this with `dscluster doctor --json` output"))


def summarize(ctx: DoctorContext) -> dict:
    master = ctx.master_facts or {}
    # With no node answering, GPU vs CPU is unknown: saying "CPU (gloo)" for a GPU cluster misleads.
    answered = any(o.facts for o in ctx.outcomes.values())
    mode = ("gpu" if ctx.gpu_mode else "cpu") if answered else None
    return {
        "mode": mode, "backend": {"gpu": "nccl", "cpu": "gloo"}.get(mode or ""),
        "world_size": sum(n.slots for n in ctx.spec.nodes), "launcher": ctx.spec.launcher,
        "spec_path": str(ctx.spec.path) if getattr(ctx.spec, "path", None) else None,
        "master": f"{ctx.master.address}:{ctx.master_port}",
        "python": (master.get("python") or {}).get("executable"),
        "versions": {k: v for k, v in cn._versions(master).items() if v} if master else {},
        "socket_ifname": cc.suggested_ifname(ctx),
    }
