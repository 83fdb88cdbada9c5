"""--exclude-unhealthy's evidence (runs/preparing/exclude.py, doctor/health.py): doctor's last verdict per node, merged
across checks of some nodes only; the newest run's failures, cleared by a later successful attempt on
the node; hosts without the excluded nodes, never none."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dscluster.cluster.spec import ClusterSpec, NodeSpec
from dscluster.doctor import health
from dscluster.doctor.model import CheckResult, Report
from dscluster.errors import ClusterError
from dscluster.launcher import backends
from dscluster.runs.preparing import exclude


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path / "home"))
    shared = tmp_path / "shared"
    shared.mkdir()
    return ClusterSpec(name="c1", nodes=tuple(NodeSpec(f"10.0.0.{i}", 1, f"n{i}") for i in range(3)),
                       shared_dir=shared, ssh_user="u", path=tmp_path / "dscluster.toml")


def report(nodes, bad: dict[str, str]) -> Report:
    results = [CheckResult(n, "bandwidth", n not in bad, bad.get(n, "fine")) for n in nodes]
    return Report(cluster="c1", nodes=list(nodes), results=results)


def test_doctor_verdicts_are_merged_per_node_and_old_ones_expire(spec):
    health.remember(spec, report(["n0", "n1", "n2"], {"n1": "0.006 GB/s at best"}))
    health.remember(spec, report(["n0", "n2"], {}))  # a pre-flight of the nodes a launch used: n1 keeps its verdict
    bad = health.unhealthy(spec)
    assert list(bad) == ["n1"] and "bandwidth: 0.006 GB/s at best" in bad["n1"].evidence
    found = exclude.find(spec, spec.shared_dir)
    assert [(e.node, e.source) for e in found] == [("n1", "doctor")]
    assert "n1 left out (--exclude-unhealthy): doctor" in exclude.status_lines([found[0].to_dict()])[0]
    data = json.loads(health.health_path(spec).read_text())
    data["nodes"]["n1"]["time"] = time.time() - health.MAX_AGE_S - 60
    health.health_path(spec).write_text(json.dumps(data))
    assert health.unhealthy(spec) == {}
    health.health_path(spec).write_text("[not an object")
    assert health.unhealthy(spec) == {}


def write_run(shared: Path, run_id: str, created: str, events: list[dict], attempts: list[dict]) -> None:
    d = shared / "runs" / run_id
    (d / "logs").mkdir(parents=True)
    (d / "run.json").write_text(json.dumps({"id": run_id, "version": 1, "cluster": "c1", "created": created,
                                            "status": "failed", "attempts": attempts,
                                            "launch": {"program": "t.py"}}))
    (d / "events.jsonl").write_text("".join(json.dumps({"t": 1, **e}) + "\n" for e in events))


def test_the_newest_runs_failures_point_to_nodes_unless_a_later_attempt_trained_there(spec):
    shared = spec.shared_dir
    write_run(shared, "old-1", "2026-01-01T00:00:00+00:00",
              [{"event": "rank-failed", "attempt": 1, "node": "n0", "detail": "old"}], [])
    write_run(shared, "new-2", "2026-02-01T00:00:00+00:00",
              [{"event": "rank-failed", "attempt": 1, "node": "n2", "detail": "rank 2 killed"},
               {"event": "node-lost", "attempt": 2, "node": "10.0.0.1", "detail": "no heartbeat"},
               {"event": "restart", "attempt": 2}],
              [{"n": 1, "reason": "exit 1 on n2", "rank_nodes": ["n0", "n1", "n2"]},
               {"n": 2, "reason": "node lost", "rank_nodes": ["n0", "n1"]},
               {"n": 3, "reason": "succeeded", "rank_nodes": ["n0", "n2"]}])
    fails = exclude.last_run_failures(shared, "c1")
    assert set(fails) == {"10.0.0.1"} and "run new-2 attempt 2 failed there: no heartbeat" in fails["10.0.0.1"]
    found = exclude.find(spec, shared)
    assert [(e.node, e.source) for e in found] == [("n1", "run")]  # addressed by IP, named as the spec does
    assert exclude.last_run_failures(shared, "other") == {}


def test_hosts_without_the_excluded_nodes_and_never_none(spec):
    hosts = (("n0", 1), ("10.0.0.1", 1), ("n2", 1))
    gone = [exclude.Excluded("n1", "doctor", "x")]
    assert exclude.without(spec, hosts, gone) == (("n0", 1), ("n2", 1))
    with pytest.raises(ClusterError) as err:
        exclude.without(spec, hosts, [exclude.Excluded(n, "doctor", "bad") for n in ("n0", "n1", "n2")])
    assert "leaves no node" in err.value.message and "n2 left out" in err.value.message
    with pytest.raises(Exception) as err:
        exclude.check_target(None, backends.get("pdsh"))
    assert "--exclude-unhealthy" in str(err.value)
