"""`doctor --collective`: a real all-reduce across every slot of every node, then its bus bandwidth.

Each node gets one ssh call that forks `slots` ranks (collective_script.py); ranks meet at the
master's address and port like DeepSpeed's do, over the interface that routes to the master. It
proves what the per-node checks cannot: that the ranks can actually form one group.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources

from dscluster.cluster.runner import Runner, run_parallel
from dscluster.doctor.context import DoctorContext
from dscluster.doctor.model import CLUSTER_ROW, CheckResult, failed, passed, skipped
from dscluster.doctor.probe import _last_meaningful_line, boot_script
from dscluster.i18n import tr

MARKER = "DSCLUSTER-COLLECTIVE "
INIT_TIMEOUT_S = 60


def collective_params(ctx: DoctorContext, index: int, size_mb: float) -> dict:
    nodes = ctx.spec.nodes
    return {"slots": nodes[index].slots, "rank_offset": sum(n.slots for n in nodes[:index]),
            "world_size": sum(n.slots for n in nodes), "master_address": ctx.master.address,
            "master_port": ctx.master_port, "backend": "nccl" if ctx.gpu_mode else "gloo",
            "size_mb": size_mb, "warmup": 2, "iters": 5, "init_timeout_s": INIT_TIMEOUT_S}


def collective_env(ctx: DoctorContext, node) -> dict[str, str]:
    """Pin gloo/NCCL to the interface that routes to the master on *this* node (names may differ)."""
    iface = ctx.spec.network_interface or ((ctx.facts(node) or {}).get("route") or {}).get("iface")
    env = {"OMP_NUM_THREADS": "1"}
    if iface and iface != "lo":
        env.update(GLOO_SOCKET_IFNAME=iface, NCCL_SOCKET_IFNAME=iface)
    return env


def run_collective(ctx: DoctorContext, runners: Sequence[Runner], python: str, results: list[CheckResult],
                   size_mb: float | None = None) -> CheckResult:
    blockers = [r for r in results if not r.ok and r.check in ("ssh", "port", "python", "slots")]
    if blockers:
        b = blockers[0]
        return skipped(CLUSTER_ROW, "collective", tr("not run: {node} failed the {check} check", node=b.node,
                                                     check=b.check))
    size_mb = size_mb or (256.0 if ctx.gpu_mode else 16.0)
    source = (resources.files("dscluster.doctor") / "collective_script.py").read_text(encoding="utf-8")
    nodes = list(ctx.spec.nodes)

    def one(i: int):
        argv = ["env", *[f"{k}={v}" for k, v in collective_env(ctx, nodes[i]).items()],
                "sh", "-c", boot_script(), "sh", python, json.dumps(collective_params(ctx, i, size_mb))]
        return runners[i].run(argv, input=source, timeout=INIT_TIMEOUT_S + 90)

    outs = run_parallel(one, range(len(nodes)), max_workers=max(1, len(nodes)))  # all ranks must meet
    failures = [(ctx.node_name(n), o) for n, o in zip(nodes, outs) if not o.ok]
    data = next((json.loads(line[len(MARKER):]) for o in outs for line in o.stdout.splitlines()
                 if line.startswith(MARKER)), None)
    if failures or data is None:
        node, out = failures[0] if failures else (ctx.node_name(nodes[0]), outs[0])
        detail = "timed out" if out.timed_out else (_last_meaningful_line(out.stderr) or f"exit {out.returncode}")
        return failed(CLUSTER_ROW, "collective",
                      tr("all-reduce across {n} ranks failed on {node}: {detail}",
                         n=sum(n.slots for n in nodes), node=node, detail=detail),
                      tr("set NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME (network_interface in dscluster.toml) to the "
                         "interface between the nodes, open the master port, and rerun with NCCL_DEBUG=INFO"),
                      failed_nodes=[f for f, _ in failures])
    if not data.get("correct"):
        return failed(CLUSTER_ROW, "collective", tr("all-reduce returned a wrong sum"),
                      tr("check the interconnect and driver versions; rerun with NCCL_DEBUG=INFO"), **data)
    return passed(CLUSTER_ROW, "collective",
                  tr("{backend} all-reduce of {mb:g} MiB across {n} ranks: {ms:.1f} ms, bus bandwidth {bw:.2f} GB/s",
                     backend=data["backend"], mb=data["size_mb"], n=data["world_size"], ms=data["time_ms"],
                     bw=data["busbw_gbs"]), **data)
