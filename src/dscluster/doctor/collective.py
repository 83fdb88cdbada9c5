"""`doctor --collective`: a real all-reduce across every slot of every node, its bus bandwidth, then
every link on its own (each pair of nodes, and GPU 0 with each other GPU inside a node), judged against
the median and this cluster's baseline (doctor/bandwidth.py), and on GPU nodes the transport NCCL chose
(doctor/nccl_transport.py).

Each node gets one ssh call that forks `slots` ranks (collective_script.py); ranks meet at the
master's address and port like DeepSpeed's do, over the interface that routes to the master. It
proves what the per-node checks cannot: that the ranks can actually form one group, and how fast
each node and link really is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from dscluster.cluster.runner import Runner, run_parallel
from dscluster.doctor import bandwidth, nccl_transport
from dscluster.doctor.context import DoctorContext
from dscluster.doctor.model import CLUSTER_ROW, CheckResult, failed, passed, skipped
from dscluster.doctor.probe import _last_meaningful_line, boot_script
from dscluster.i18n import tr

MARKER = "DSCLUSTER-COLLECTIVE "
INIT_TIMEOUT_S = 60
LINK_MB = {"cpu": 4.0, "gpu": 64.0}  # the pair exchange's buffer (capped by --collective-mb)
LINK_ITERS = 5  # round trips per pair; the fastest counts


def collective_params(ctx: DoctorContext, index: int, size_mb: float, link_mb: float | None = None) -> dict:
    nodes = ctx.spec.nodes
    return {"slots": nodes[index].slots, "rank_offset": sum(n.slots for n in nodes[:index]),
            "world_size": sum(n.slots for n in nodes), "master_address": ctx.master.address,
            "master_port": ctx.master_port, "backend": "nccl" if ctx.gpu_mode else "gloo",
            "size_mb": size_mb, "warmup": 2, "iters": 5, "init_timeout_s": INIT_TIMEOUT_S,
            "node_slots": [n.slots for n in nodes], "link_mb": link_mb, "link_iters": LINK_ITERS}


def collective_env(ctx: DoctorContext, node) -> dict[str, str]:
    """Pin gloo/NCCL to the interface that routes to the master on *this* node (names may differ); on
    GPU nodes NCCL also reports its transport (NCCL_DEBUG=INFO for INIT and NET only)."""
    iface = ctx.spec.network_interface or ((ctx.facts(node) or {}).get("route") or {}).get("iface")
    env = {"OMP_NUM_THREADS": "1"}
    if iface and iface != "lo":
        env.update(GLOO_SOCKET_IFNAME=iface, NCCL_SOCKET_IFNAME=iface)
    if ctx.gpu_mode:
        env.update(nccl_transport.DEBUG_ENV)
    return env


def run_collective(ctx: DoctorContext, runners: Sequence[Runner], python: str, results: list[CheckResult],
                   size_mb: float | None = None, *, fraction: float = bandwidth.DEFAULT_FRACTION,
                   baseline: bool = True) -> list[CheckResult]:
    """The collective's result (CLUSTER_ROW, "collective") first, then each node's `bandwidth` and,
    on GPU nodes, `transport` results, then the cluster's `bandwidth` summary. Link figures that would
    name a slow node or link are measured once more first (judge_links), each link keeping its better
    figure (bandwidth.best_of)."""
    blockers = [r for r in results if not r.ok and r.check in ("ssh", "port", "python", "slots")]
    if blockers:
        b = blockers[0]
        return [skipped(CLUSTER_ROW, "collective", tr("not run: {node} failed the {check} check", node=b.node,
                                                      check=b.check))]
    size_mb = size_mb or (256.0 if ctx.gpu_mode else 16.0)
    link_mb = min(size_mb, LINK_MB["gpu" if ctx.gpu_mode else "cpu"])
    source = (resources.files("dscluster.doctor") / "collective_script.py").read_text(encoding="utf-8")
    nodes = list(ctx.spec.nodes)

    def one(i: int):
        argv = ["env", *[f"{k}={v}" for k, v in collective_env(ctx, nodes[i]).items()],
                "sh", "-c", boot_script(), "sh", python, json.dumps(collective_params(ctx, i, size_mb, link_mb))]
        return runners[i].run(argv, input=source, timeout=INIT_TIMEOUT_S + 90)

    def measure():
        outs = run_parallel(one, range(len(nodes)), max_workers=max(1, len(nodes)))  # all ranks must meet
        data = next((json.loads(line[len(MARKER):]) for o in outs for line in o.stdout.splitlines()
                     if line.startswith(MARKER)), None)
        return outs, data

    outs, data = measure()
    failures = [(ctx.node_name(n), o) for n, o in zip(nodes, outs) if not o.ok]
    if failures or data is None:
        node, out = failures[0] if failures else (ctx.node_name(nodes[0]), outs[0])
        detail = "timed out" if out.timed_out else (_last_meaningful_line(out.stderr) or f"exit {out.returncode}")
        return [failed(CLUSTER_ROW, "collective",
                       tr("all-reduce across {n} ranks failed on {node}: {detail}",
                          n=sum(n.slots for n in nodes), node=node, detail=detail),
                       tr("set NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME (network_interface in dscluster.toml) to the "
                          "interface between the nodes, open the master port, and rerun with NCCL_DEBUG=INFO"),
                       failed_nodes=[f for f, _ in failures])]
    links = data.pop("links", None) or []
    if not data.get("correct"):
        return [failed(CLUSTER_ROW, "collective", tr("all-reduce returned a wrong sum"),
                       tr("check the interconnect and driver versions; rerun with NCCL_DEBUG=INFO"), **data)]
    out = [passed(CLUSTER_ROW, "collective",
                  tr("{backend} all-reduce of {mb:g} MiB across {n} ranks: {ms:.1f} ms, bus bandwidth {bw:.2f} GB/s",
                     backend=data["backend"], mb=data["size_mb"], n=data["world_size"], ms=data["time_ms"],
                     bw=data["busbw_gbs"]), **data)]
    names = [ctx.node_name(n) for n in nodes]
    if ctx.gpu_mode:
        for node, o in zip(nodes, outs):
            t = nccl_transport.parse(o.stdout + "\n" + o.stderr)
            out.append(nccl_transport.judge(ctx.node_name(node), t, ctx.facts(node), multi_node=len(nodes) > 1,
                                            iface=ctx.spec.network_interface))
    out += judge_links(ctx, bandwidth.links_from(links, names), names, data, lambda: measure()[1],
                       fraction=fraction, baseline=baseline)
    return out


def judge_links(ctx: DoctorContext, links: list[bandwidth.Link], names: list[str], data: dict, again, *,
                fraction: float, baseline: bool) -> list[CheckResult]:
    """The link figures judged (and, when asked, against and into this cluster's baseline). Figures that would
    name a slow node or link are measured once more first (`again()`), each link keeping its better figure: a
    hiccup on a busy machine seldom hits the same link twice."""
    if not links:
        return []
    kind = {"backend": data.get("backend"), "link_mb": data.get("link_mb")}
    path = bandwidth.baseline_path(ctx.spec) if baseline else None
    history = bandwidth.load_history(path) if path else []
    base = bandwidth.baseline_from(history, kind)
    verdict = bandwidth.judge(links, fraction, base)
    if not verdict.ok and (second := again()) and second.get("correct"):
        links = bandwidth.best_of(links, bandwidth.links_from(second.get("links") or [], names))
        verdict = bandwidth.judge(links, fraction, base)
    if path is not None:
        try:
            bandwidth.record(path, history, verdict, kind)
        except OSError:
            pass  # a read-only home: the figures are still judged against the median
    sim = None
    if running_sim(ctx.spec):
        sim = "" if ctx.spec.name == "default" else f" --name {ctx.spec.name}"
    return bandwidth.results(verdict, names, simulated=sim)


def running_sim(spec) -> bool:
    """`spec` is a running simulated cluster's (its runtime state names this spec file): a slow node
    there is one `sim slow` shaped, which `sim heal` undoes."""
    from dscluster.sim.names import SimNames, check_name

    try:
        check_name(spec.name)
        state = json.loads((SimNames(spec.name).runtime_dir / "state.json").read_text(encoding="utf-8"))
        return bool(spec.path) and Path(state["spec_path"]).resolve() == Path(spec.path).resolve()
    except Exception:  # noqa: BLE001 - no state, another cluster's, a name that is no sim name
        return False
