"""Each node's last verdict from doctor, kept in the launching user's state dir, for
`launch --exclude-unhealthy`: a node whose last check failed is left out of the next launch.

<home>/doctor/<cluster key>/nodes.json: {"version": 1, "nodes": {name: {"time", "ok", "problems": [...]}}}.
Merged per node (a launch's pre-flight checks only the nodes it uses: a node left out keeps its last
verdict until a check sees it again). Parsed as data, written only by this user.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from dscluster.doctor.bandwidth import baseline_path
from dscluster.doctor.model import CLUSTER_ROW, Report
from dscluster.fsutil import atomic_write_json

MAX_AGE_S = 7 * 24 * 3600.0  # an older verdict is history, not evidence


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    time: float
    ok: bool
    problems: tuple[str, ...]  # "check: finding"

    @property
    def evidence(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.time))
        return f"doctor {when}: " + "; ".join(self.problems)


def health_path(spec) -> Path:
    return baseline_path(spec).parent / "nodes.json"


def verdicts_of(report: Report, now: float | None = None) -> dict[str, NodeVerdict]:
    now = now or time.time()
    out = {}
    for node in report.nodes:
        problems = [f"{r.check}: {r.finding}" for r in report.results if r.node == node and not r.ok]
        for r in report.results:  # the collective names the nodes whose ranks failed
            if r.node == CLUSTER_ROW and not r.ok and node in (r.details.get("failed_nodes") or ()):
                problems.append(f"{r.check}: {r.finding}")
        out[node] = NodeVerdict(node, now, not problems, tuple(problems))
    return out


def remember(spec, report: Report) -> None:
    path = health_path(spec)
    known = {v.node: v for v in load(spec, max_age_s=None).values()}
    known.update(verdicts_of(report))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, {"version": 1, "nodes": {
            n: {"time": v.time, "ok": v.ok, "problems": list(v.problems)} for n, v in known.items()}})
    except OSError:
        pass  # a read-only home: doctor still reports; only --exclude-unhealthy has nothing to read


def load(spec, max_age_s: float | None = MAX_AGE_S) -> dict[str, NodeVerdict]:
    try:
        data = json.loads(health_path(spec).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    nodes = data.get("nodes") if isinstance(data, dict) else None
    out = {}
    now = time.time()
    for name, v in (nodes or {}).items() if isinstance(nodes, dict) else ():
        try:
            verdict = NodeVerdict(str(name), float(v["time"]), bool(v["ok"]), tuple(str(p) for p in v["problems"]))
        except (KeyError, TypeError, ValueError):
            continue
        if max_age_s is None or now - verdict.time <= max_age_s:
            out[verdict.node] = verdict
    return out


def unhealthy(spec) -> dict[str, NodeVerdict]:
    """The nodes whose last doctor check (within MAX_AGE_S) failed."""
    return {n: v for n, v in load(spec).items() if not v.ok}
