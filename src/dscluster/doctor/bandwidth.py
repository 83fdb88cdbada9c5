"""Bandwidth per node and per link, from `doctor --collective`'s pair measurements, judged against the
median of the cluster and against this cluster's own baseline.

Every pair of nodes is measured on its own (collective_script.pair_rounds); a node's figure is the
best it reached with any peer. Why the best and not the median of its links: with three nodes a slow
node sits on two of the three links, so the median link is a slow one; but every healthy node still
has one fast peer, while a slow node has none. So:

- a node is slow when its best figure is below `fraction` x the median of the nodes' figures, or below
  `fraction` x its own baseline (the median of its earlier healthy figures on this cluster);
- a link is slow when it is below `fraction` x the median of the links between nodes that are not
  slow (a bad cable or switch port between two good nodes);
- inside a node with several GPUs, a GPU pair is slow when below `fraction` x the median of every
  node's GPU pairs.

A verdict that names anything is measured once more before it is given (collective.judge_links),
and each link keeps the better of its two figures (`best_of`): a bad cable is slow every time, while a
busy CPU or a scheduler hiccup on a shared machine seldom hits the same link twice.

The baseline lives in the launching user's state dir (<home>/doctor/<cluster key>/bandwidth.json): it
is parsed as data, only this user writes it, and only figures judged healthy go into it.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dscluster import paths
from dscluster.doctor.model import CLUSTER_ROW, CheckResult, failed, passed
from dscluster.fsutil import atomic_write_json
from dscluster.i18n import tr

DEFAULT_FRACTION = 0.5
HISTORY_KEEP = 10  # measurements kept per cluster; the baseline is the median of a node's healthy ones
CHECK = "bandwidth"


@dataclass(frozen=True)
class Link:
    kind: str  # "node": between two nodes (their first ranks) | "gpu": GPU 0 with GPU b inside `node`
    a: str
    b: str
    gbs: float
    node: str | None = None

    @property
    def label(self) -> str:
        if self.kind == "gpu":
            return f"{self.node} GPU{self.a}↔GPU{self.b}"
        return f"{self.a}↔{self.b}"


@dataclass
class Verdict:
    nodes: dict[str, float]  # node -> its best figure to any peer (GB/s)
    median: float | None
    slow_nodes: dict[str, str] = field(default_factory=dict)  # node -> why
    slow_links: dict[str, str] = field(default_factory=dict)  # link label -> why
    links: list[Link] = field(default_factory=list)
    baseline: dict[str, float] = field(default_factory=dict)
    fraction: float = DEFAULT_FRACTION

    @property
    def ok(self) -> bool:
        return not self.slow_nodes and not self.slow_links


def links_from(data: Sequence[Mapping], names: Sequence[str]) -> list[Link]:
    """The collective script's link entries (node indexes) as Links with node names; odd entries skipped."""
    out = []
    for e in data or ():
        try:
            kind, a, b, gbs = str(e["kind"]), int(e["a"]), int(e["b"]), float(e["gbs"])
            if kind == "node":
                out.append(Link("node", names[a], names[b], gbs))
            elif kind == "gpu":
                out.append(Link("gpu", str(a), str(b), gbs, node=names[int(e["node"])]))
        except (KeyError, TypeError, ValueError, IndexError):
            continue
    return out


def best_of(*measurements: Sequence[Link]) -> list[Link]:
    """Pure: each link (kind, ends, node) once, with its best figure over the measurements, in first-seen
    order."""
    best: dict[tuple, Link] = {}
    for links in measurements:
        for lk in links:
            key = (lk.kind, lk.a, lk.b, lk.node)
            if key not in best or lk.gbs > best[key].gbs:
                best[key] = lk
    return list(best.values())


def judge(links: Sequence[Link], fraction: float = DEFAULT_FRACTION,
          baseline: Mapping[str, float] | None = None) -> Verdict:
    """Pure: which nodes and links fall below `fraction` of the median (or of their baseline)."""
    baseline = dict(baseline or {})
    between = [lk for lk in links if lk.kind == "node"]
    best: dict[str, float] = {}
    for lk in between:
        for n in (lk.a, lk.b):
            best[n] = max(best.get(n, 0.0), lk.gbs)
    median = statistics.median(best.values()) if best else None
    v = Verdict(nodes=best, median=median, links=list(links), baseline=baseline, fraction=fraction)
    for n, gbs in best.items():
        if len(best) >= 3 and median and gbs < fraction * median:  # two nodes: one link, nobody to compare
            v.slow_nodes[n] = tr("{gbs} GB/s at best, below {f:g} x the median of the nodes ({med} GB/s)",
                                 gbs=fmt(gbs), f=fraction, med=fmt(median))
        elif baseline.get(n) and gbs < fraction * baseline[n]:
            v.slow_nodes[n] = tr("{gbs} GB/s at best, below {f:g} x its baseline ({base} GB/s)",
                                 gbs=fmt(gbs), f=fraction, base=fmt(baseline[n]))
    good = [lk for lk in between if lk.a not in v.slow_nodes and lk.b not in v.slow_nodes]
    if len(good) >= 3:
        ref = statistics.median(lk.gbs for lk in good)
        for lk in good:
            if lk.gbs < fraction * ref:
                v.slow_links[lk.label] = tr("{gbs} GB/s, below {f:g} x the median of the links between healthy "
                                            "nodes ({med} GB/s)", gbs=fmt(lk.gbs), f=fraction, med=fmt(ref))
    inside = [lk for lk in links if lk.kind == "gpu"]
    if len(inside) >= 2:
        ref = statistics.median(lk.gbs for lk in inside)
        for lk in inside:
            if lk.gbs < fraction * ref:
                v.slow_links[lk.label] = tr("{gbs} GB/s, below {f:g} x the median of the GPU pairs inside the "
                                            "nodes ({med} GB/s)", gbs=fmt(lk.gbs), f=fraction, med=fmt(ref))
    return v


def fmt(gbs: float) -> str:
    return f"{gbs:.3g}"


def results(v: Verdict, node_order: Sequence[str], *, simulated: str | None = None) -> list[CheckResult]:
    """One `bandwidth` result per node (its figure beside the others'), and one for the cluster."""
    out = []
    others = ", ".join(f"{n} {fmt(v.nodes[n])}" for n in node_order if n in v.nodes)
    for n in node_order:
        if n not in v.nodes:
            continue
        mine = [lk for lk in v.links if n in (lk.a, lk.b) and lk.kind == "node"]
        inside = [lk for lk in v.links if lk.kind == "gpu" and lk.node == n]
        figures = "; ".join(f"{lk.label} {fmt(lk.gbs)}" for lk in mine + inside)
        bad_links = {lbl: why for lbl, why in v.slow_links.items() if lbl.startswith(f"{n} GPU")
                     or n in lbl.split("↔")}
        details = {"gbs": v.nodes[n], "median_gbs": v.median, "baseline_gbs": v.baseline.get(n),
                   "links": {lk.label: lk.gbs for lk in mine + inside}}
        if n in v.slow_nodes:
            fix = (tr("simulated cluster: remove the shaping with `dscluster sim heal{flag} {node}`",
                      flag=simulated, node=n) if simulated is not None else
                   tr("check {node}'s network: link speed and errors (ethtool, ip -s link), the cable and switch "
                      "port, the NIC firmware; meanwhile leave it out: dscluster launch --exclude-unhealthy ...",
                      node=n))
            out.append(failed(n, CHECK, tr("{node}: {why} (links: {figures}; every node's best: {others})",
                                           node=n, why=v.slow_nodes[n], figures=figures, others=others), fix,
                              **details))
        elif bad_links:
            text = "; ".join(f"{lbl}: {why}" for lbl, why in bad_links.items())
            out.append(failed(n, CHECK, tr("slow link {text}", text=text),
                              tr("check the cable, switch ports or NVLink/PCIe path of that link (nvidia-smi topo -m "
                                 "inside a node); rerun doctor --collective to confirm"), **details))
        else:
            out.append(passed(n, CHECK, tr("{gbs} GB/s at best ({figures})", gbs=fmt(v.nodes[n]), figures=figures),
                              **details))
    if v.median is not None:
        summary = tr("per node, GB/s at best with any peer: {others} (median {med}; a node below {f:g} x the median "
                     "or x its baseline is named)", others=others, med=fmt(v.median), f=v.fraction)
        out.append((passed if v.ok else failed)(CLUSTER_ROW, CHECK, summary, *(() if v.ok else (
            tr("see the nodes named above"),)), slow_nodes=sorted(v.slow_nodes), slow_links=sorted(v.slow_links)))
    return out


# --- the baseline (the launching user's state) ---------------------------------------------------

def baseline_path(spec) -> Path:
    """<home>/doctor/<cluster name>-<hash of its spec path>/bandwidth.json: one per cluster spec."""
    where = str(getattr(spec, "path", None) or "")
    key = hashlib.sha256(where.encode()).hexdigest()[:10]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(getattr(spec, "name", "cluster")))[:40]
    return paths.home() / "doctor" / f"{name}-{key}" / "bandwidth.json"


def load_history(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    hist = data.get("history") if isinstance(data, dict) else None
    return [h for h in hist if isinstance(h, dict) and isinstance(h.get("nodes"), dict)] if isinstance(hist, list) else []


def baseline_from(history: Sequence[Mapping], kind: Mapping) -> dict[str, float]:
    """Each node's median healthy figure over the measurements made the same way (backend, buffer size)."""
    per: dict[str, list[float]] = {}
    for h in history:
        if h.get("backend") != kind.get("backend") or h.get("link_mb") != kind.get("link_mb"):
            continue
        for n, gbs in h["nodes"].items():
            if isinstance(gbs, (int, float)) and gbs > 0:
                per.setdefault(str(n), []).append(float(gbs))
    return {n: statistics.median(vals) for n, vals in per.items()}


def record(path: Path, history: list[dict], v: Verdict, kind: Mapping) -> None:
    healthy = {n: g for n, g in v.nodes.items() if n not in v.slow_nodes}
    if not healthy:
        return
    entry = {"time": time.time(), **{k: kind.get(k) for k in ("backend", "link_mb")}, "nodes": healthy}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"version": 1, "history": [*history, entry][-HISTORY_KEEP:]})
