"""`launch --exclude-unhealthy`: leave out the nodes that the evidence points to, and say which and why.

Evidence, newest first:
- doctor's last verdict on each node (doctor/health.py, this user's state: any `dscluster doctor`, a
  launch's pre-flight, `doctor --collective`'s slow node or link);
- the newest run on this cluster: a node its failed attempts named (a rank that died there, a node
  lost or unreachable) and no later attempt of that run trained on successfully;
- the launch's own pre-flight: a node failing doctor's fast checks now is left out instead of
  refusing the launch (the others are checked again as the new layout).

The run goes on with the rest; run.json's `excluded` keeps each node and its evidence, and
`dscluster status` shows them. Pure apart from reading the run store and the health file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dscluster.errors import ClusterError, UsageError
from dscluster.i18n import tr

FAILURE_EVENTS = ("rank-failed", "node-lost", "unreachable", "stalled")


@dataclass(frozen=True)
class Excluded:
    node: str  # the node's name in the cluster spec
    source: str  # "doctor" | "run" | "preflight"
    evidence: str

    def to_dict(self) -> dict:
        return {"node": self.node, "source": self.source, "evidence": self.evidence}

    def describe(self) -> str:
        return tr("{node} left out (--exclude-unhealthy): {evidence}", node=self.node, evidence=self.evidence)


def last_run_failures(shared: Path, cluster: str | None) -> dict[str, str]:
    """node -> evidence: the nodes the newest run on `cluster` failed on, unless a later attempt of that
    run trained on them to the end."""
    from dscluster.runs.records import store

    runs = [r for r in store.list_runs(Path(shared)) if r.record.cluster == cluster]
    if not runs:
        return {}
    newest = max(runs, key=lambda r: r.record.created or "")
    suspects: dict[str, str] = {}
    for e in store.read_events(newest.dir):
        if e.get("event") in FAILURE_EVENTS and e.get("node"):
            node = str(e["node"])
            suspects[node] = tr("run {run} attempt {n} failed there: {detail}", run=newest.record.id,
                                n=e.get("attempt", "?"), detail=str(e.get("detail") or e["event"])[:200])
    for a in newest.record.attempts:
        if a.reason == "succeeded":
            for node in a.rank_nodes:
                suspects.pop(node, None)
    return suspects


def find(spec, shared: Path) -> list[Excluded]:
    """What the recorded evidence says to leave out (doctor's verdicts, then the newest run's failures)."""
    from dscluster.doctor import health

    out: dict[str, Excluded] = {}
    names = {n.name for n in spec.nodes}
    for node, verdict in health.unhealthy(spec).items():
        if node in names:
            out[node] = Excluded(node, "doctor", verdict.evidence)
    by_address = {n.address: n.name for n in spec.nodes}
    for node, why in last_run_failures(shared, getattr(spec, "name", None)).items():
        name = by_address.get(node, node)
        if name in names and name not in out:
            out[name] = Excluded(name, "run", why)
    return [out[n.name] for n in spec.nodes if n.name in out]


def preflight(spec, hosts: Sequence[tuple[str, int]]) -> list[Excluded]:
    """doctor's fast checks on the nodes `hosts` names: those that fail a check of their own."""
    from dscluster.doctor import run_doctor
    from dscluster.doctor.model import CLUSTER_ROW

    used = used_nodes(spec, hosts)
    if not used:
        return []
    from dataclasses import replace

    report = run_doctor(replace(spec, nodes=tuple(used)), fast=True)
    bad: dict[str, list[str]] = {}
    for r in report.failures:
        if r.node != CLUSTER_ROW:
            bad.setdefault(r.node, []).append(f"{r.check}: {r.finding}")
    return [Excluded(n.name, "preflight", tr("doctor before this launch: {problems}", problems="; ".join(bad[n.name])))
            for n in used if n.name in bad]


def used_nodes(spec, hosts: Iterable[tuple[str, int]]) -> list:
    wanted = {h for h, _ in hosts}
    return [n for n in spec.nodes if n.name in wanted or n.address in wanted]


def without(spec, hosts: Sequence[tuple[str, int]], excluded: Sequence[Excluded]) -> tuple[tuple[str, int], ...]:
    """`hosts` without the excluded nodes (named or addressed); refuses to leave none."""
    gone = {e.node for e in excluded}
    gone |= {n.address for n in spec.nodes if n.name in gone}
    kept = tuple((h, s) for h, s in hosts if h not in gone)
    if not kept:
        raise ClusterError(tr("--exclude-unhealthy leaves no node to run on:\n  {why}",
                              why="\n  ".join(e.describe() for e in excluded)),
                           tr("fix the nodes (see `dscluster doctor`), or launch without --exclude-unhealthy"))
    return kept


def check_target(spec, backend) -> None:
    """--exclude-unhealthy needs nodes dscluster reaches itself (`backend.over_ssh`)."""
    if spec is None or not backend.over_ssh:
        raise UsageError(tr("--exclude-unhealthy needs a cluster that dscluster reaches over ssh"),
                         tr("give --cluster (or a hostfile); a scheduler leaves out nodes itself (drain them)"),
                         setting="--exclude-unhealthy")


def status_lines(excluded: Sequence[Mapping] | None) -> list[str]:
    from dscluster import console

    out = []
    for e in excluded or ():
        if isinstance(e, Mapping) and e.get("node"):
            out.append(f"{console.WARN} " + Excluded(str(e["node"]), str(e.get("source") or ""),
                                                     str(e.get("evidence") or "")).describe())
    return out
