"""Continuing a run on fewer nodes: `dscluster restart RUN --hosts ...` and the supervisor's --allow-shrink.

A node lost for good leaves a run two ways to go on: the user restarts it on the nodes that remain
(`--hosts node1,node3`, names from the cluster spec), or the supervisor, launched with
`--allow-shrink`, does it by itself when the node has not answered within --restart-wait. Either
way the run resumes from its newest committed step (the trainer converts a step saved by another
number of ranks to DeepSpeed's universal format) with the global batch kept where it divides
(dscluster.batchplan).

Pure: the names are checked and the new layout planned here; the supervisor and the restart apply it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dscluster import batchplan
from dscluster.errors import UsageError
from dscluster.i18n import tr


def pick_hosts(value: str, nodes: Sequence[str], cluster: str) -> tuple[str, ...]:
    """`--hosts H1,H2`: node names of the cluster spec, in the spec's order (its first is the master),
    each once. Unknown names are named, with the spec's own names as the fix."""
    names = [n.strip() for n in value.split(",")]
    if not value.strip() or any(not n for n in names):
        raise UsageError(tr("--hosts {value!r} is not a comma-separated list of node names", value=value),
                         tr("e.g. --hosts {example}", example=",".join(nodes[:2]) or "node1,node2"), setting="--hosts")
    unknown = [n for n in dict.fromkeys(names) if n not in nodes]
    if unknown:
        raise UsageError(tr("--hosts: {names} not in cluster {cluster} (its nodes: {nodes})", names=", ".join(unknown),
                            cluster=cluster, nodes=", ".join(nodes)),
                         tr("name nodes as the cluster spec does, e.g. --hosts {example}; a node that is not in "
                            "the spec: add it there first (or pass --hostfile H)",
                            example=",".join([n for n in nodes if n not in unknown][:2] or nodes[:2])),
                         setting="--hosts")
    chosen = set(names)
    return tuple(n for n in nodes if n in chosen)


@dataclass(frozen=True)
class Shrink:
    """The run after losing `lost`: the hosts that remain (hostfile entries, slots) and its batch."""

    hosts: tuple[tuple[str, int], ...]
    lost: tuple[str, ...]  # node names, as the user knows them
    world_before: int
    batch: batchplan.BatchPlan | None  # None: nothing records the batch of the script (it keeps its own)

    @property
    def world(self) -> int:
        return sum(s for _, s in self.hosts)

    def describe(self, wait: float, step: int | None, names: Mapping[str, str], why: str | None = None) -> str:
        """`why`: the failure a node is left out for (--exclude-unhealthy); None: it did not come back."""
        lost = ", ".join(self.lost)
        remain = ", ".join(names.get(h, h) for h, _ in self.hosts)
        where = tr("from step-{step}", step=step) if step is not None else tr("from the start (no committed step)")
        if why is not None:
            text = tr("{lost} left out after the failure there ({why}; --allow-shrink --exclude-unhealthy): the run "
                      "continues on {remain} ({world} ranks instead of {before}) {where}", lost=lost, why=why,
                      remain=remain, world=self.world, before=self.world_before, where=where)
        else:
            text = tr("{lost} did not come back within {wait:.0f}s (--allow-shrink): the run continues on {remain} "
                      "({world} ranks instead of {before}) {where}", lost=lost, wait=wait, remain=remain,
                      world=self.world, before=self.world_before, where=where)
        if self.batch is not None:
            text += "; " + self.batch.describe()
        return text

    def to_dict(self) -> dict:
        return {"lost": list(self.lost), "hosts": [list(h) for h in self.hosts], "world_size": self.world,
                "world_before": self.world_before, "batch": self.batch.to_dict() if self.batch else None}


def plan_shrink(hosts: Sequence[Sequence], down: Sequence[str], names: Mapping[str, str],
                before: batchplan.Batch | None) -> Shrink | None:
    """The layout without the `down` hosts, or None when none would remain. `before`: the batch the
    run trained with (batchplan.recorded_batch)."""
    kept = tuple((str(h), int(s)) for h, s in hosts if h not in set(down))
    if not kept:
        return None
    world = sum(s for _, s in kept)
    planned = batchplan.plan(before, world) if before is not None and before.world != world else None
    return Shrink(kept, tuple(names.get(h, h) for h in down), sum(int(s) for _, s in hosts), planned)


def include_without(include: str | None, lost_hosts: Sequence[str]) -> str | None:
    """The runner's --include value (`host:0,1@host2:0`) without the lost hosts' entries."""
    if not include:
        return include
    parts = [p for p in include.split("@") if p.split(":", 1)[0] not in set(lost_hosts)]
    return "@".join(parts) or None


def continue_without(book, down: Sequence[str], attempt: int, why: str | None = None) -> bool:
    """The supervisor's --allow-shrink, applied through `book` (runs.supervising.runbook.RunBook, the supervisor's
    recording part): the `down` hosts dropped from the run's launch settings, the ranks' batch keys
    re-planned, why recorded (an event, the run record's `shrinks`, the launcher log); True, or False
    when no node would remain. `why`: the failure the hosts are left out for (--exclude-unhealthy), else
    they did not come back."""
    from dscluster.runs.preparing.program import with_batch  # noqa: PLC0415
    from dscluster.runs.records import store  # noqa: PLC0415
    from dscluster.runs.supervising.nodes import node_names  # noqa: PLC0415
    from dscluster.train.commits import latest_committed, read_commit, tag_for  # noqa: PLC0415

    cfg, record = book.cfg, book.record
    save_dir = store.save_dir(book.run_dir, record)
    step = latest_committed(save_dir)
    commit = read_commit(save_dir / tag_for(step)) if step is not None else None
    names = node_names(record)
    shrink = plan_shrink(cfg.hosts, down, names, batchplan.recorded_batch(commit, record))
    if shrink is None:
        return False
    changes: dict = {}
    launch_changes: dict = {}
    if shrink.batch is not None:
        rank_args, text = with_batch(list(cfg.args), list(cfg.ranks_args), cfg.ds_config_text, record.ds_config,
                                     book.run_dir, shrink.batch)
        launch_changes.update(rank_args=tuple(rank_args), ds_config_text=text)
        if isinstance(record.ds_config, dict):
            changes["ds_config"] = batchplan.apply(record.ds_config, shrink.batch)
        changes["batch_plan"] = {**shrink.batch.to_dict(), "text": shrink.batch.describe()}
    launch_changes.update(hosts=shrink.hosts, include=include_without(cfg.include, down))
    text = shrink.describe(float(cfg.supervision.restart_wait or 0), step, names, why)
    entry = {**shrink.to_dict(), "attempt": attempt, "from_step": step, "text": text, "time": store.now_iso(),
             "reason": "failed-there" if why is not None else "not-back"}
    book.save(launch=dataclasses.replace(cfg, **launch_changes), **changes,
             hostfile="".join(f"{h} slots={s}\n" for h, s in shrink.hosts), waiting_for=None,
             shrinks=[*record.shrinks, entry])
    book.event("shrink", attempt=attempt, lost=list(shrink.lost), hosts=[h for h, _ in shrink.hosts],
              world_size=shrink.world, from_step=step, batch=entry["batch"], text=text)
    book.log(text)
    return True


def status_lines(record) -> list[str]:
    """What `dscluster status` says about a run continued on another layout (`record`: a
    runs.records.record.RunRecord, or a runs.views.summary.RunSummary): each shrink (the lost node named) and the batch
    the ranks train with now."""
    from dscluster import console  # noqa: PLC0415

    lines = [f"{console.WARN} {s['text']}" for s in record.shrinks or () if isinstance(s, Mapping) and s.get("text")]
    planned = record.batch_plan
    if isinstance(planned, Mapping) and planned.get("text") and not any(planned["text"] in line for line in lines):
        lines.append(f"{console.OK if planned.get('kept') else console.WARN} {planned['text']}")
    return lines


def restart_hosts(value: str, spec) -> tuple[str, ...]:
    """`dscluster restart RUN --hosts H1,H2`: the names checked against the run's cluster spec (the one
    recorded at launch, a `cluster.spec.ClusterSpec`)."""
    return pick_hosts(value, [n.name for n in spec.nodes], str(spec.path or spec.name))


def batch_to_keep(record, save_dir) -> batchplan.Batch | None:
    """The batch a restart of `record` keeps: the one its newest committed step trained with."""
    from pathlib import Path  # noqa: PLC0415

    from dscluster.train.commits import latest_committed, read_commit, tag_for  # noqa: PLC0415

    step = latest_committed(save_dir)
    commit = read_commit(Path(save_dir) / tag_for(step)) if step is not None else None
    return batchplan.recorded_batch(commit, record)
