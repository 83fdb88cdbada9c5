"""The Prometheus side: the text exposition format written by hand (escaping, types, values), the
/metrics server, the node's and the run's families, the scrape config, and the Grafana dashboard
(every query names a series the exporters really write)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from dscluster import prom
from dscluster.node.exporter import node_families
from dscluster.runs.records.record import Attempt, LaunchSpec, RunRecord
from dscluster.runs.views.exporter import RunExporter

ROOT = Path(__file__).resolve().parents[2]


def test_text_format_escapes_labels_and_help_and_writes_special_values():
    fams = [prom.gauge("x_bytes", 'help with \\ and\nnewline', [({"node": 'a"b\\c\nd'}, 1.5), ({}, None)]),
            prom.counter("y_total", "count", [({"run": "r"}, 3)]),
            prom.gauge("z", "special", [({"k": "nan"}, float("nan")), ({"k": "inf"}, float("inf")),
                                        ({"k": "-inf"}, float("-inf")), ({"k": "big"}, 1e20)])]
    text = prom.render(fams)
    assert text.endswith("\n")
    lines = text.splitlines()
    assert lines[0] == "# HELP x_bytes help with \\\\ and\\nnewline" and lines[1] == "# TYPE x_bytes gauge"
    assert lines[2] == 'x_bytes{node="a\\"b\\\\c\\nd"} 1.5' and len([ln for ln in lines if ln.startswith("x_bytes")]) == 1
    assert "# TYPE y_total counter" in lines and 'y_total{run="r"} 3.0' in lines
    assert 'z{k="nan"} NaN' in lines and 'z{k="inf"} +Inf' in lines and 'z{k="-inf"} -Inf' in lines
    assert 'z{k="big"} 1e+20' in lines
    with pytest.raises(ValueError):
        prom.counter("no_suffix", "a counter's name ends in _total", [])
    with pytest.raises(ValueError):
        prom.gauge("bad-name", "", [])
    with pytest.raises(ValueError):
        prom.render([prom.gauge("ok", "", [({"bad-label": "v"}, 1)])])


def test_the_server_answers_metrics_with_the_content_type_and_404_elsewhere():
    calls = []

    def collect():
        calls.append(1)
        return [prom.gauge("dscluster_test_up", "up", [({"node": "n0"}, 1)])]

    server = prom.MetricsServer(collect, "127.0.0.1", 0)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics", timeout=10) as resp:
            assert resp.headers["Content-Type"] == prom.CONTENT_TYPE
            assert 'dscluster_test_up{node="n0"} 1.0' in resp.read().decode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"http://127.0.0.1:{server.port}/other", timeout=10)
        assert err.value.code == 404 and calls == [1]
    finally:
        server.close()


SAMPLE = {"node": "node1", "time": 1700000000.0, "cpu": {"percent": 25.0, "count": 8, "load1": 0.5},
          "memory": {"total": 8 * 2**30, "used": 2 * 2**30},
          "gpus": [{"index": 0, "name": "NVIDIA H200", "util": 87, "mem_used": 70 * 2**30, "mem_total": 141 * 2**30,
                    "power_w": 512.5, "power_limit_w": 700.0, "temp_c": 61},
                   {"index": 1, "name": "NVIDIA H200", "util": None, "mem_used": 1, "mem_total": 2, "power_w": None,
                    "power_limit_w": None, "temp_c": 40}]}


def test_node_families_carry_the_panel_series_in_base_units():
    text = prom.render(node_families(SAMPLE, "node1"))
    assert 'dscluster_gpu_utilization_ratio{node="node1",gpu="0",model="NVIDIA H200"} 0.87' in text
    assert 'dscluster_gpu_memory_used_bytes{node="node1",gpu="0",model="NVIDIA H200"} 75161927680.0' in text
    assert 'dscluster_gpu_power_watts{node="node1",gpu="0",model="NVIDIA H200"} 512.5' in text
    assert 'dscluster_gpu_temperature_celsius{node="node1",gpu="1",model="NVIDIA H200"} 40.0' in text
    assert 'gpu="1"' not in text.split("# HELP dscluster_gpu_utilization_ratio")[1].split("# HELP")[0]  # None: absent
    assert 'dscluster_node_cpu_utilization_ratio{node="node1"} 0.25' in text and 'dscluster_node_up{node="node1"} 1.0' in text
    assert prom.render(node_families(None, "n")) == \
        '# HELP dscluster_node_up 1 when the node agent has a fresh sample of this node\n' \
        '# TYPE dscluster_node_up gauge\ndscluster_node_up{node="n"} 0.0\n'


def fake_sup(tmp_path):
    run_dir = tmp_path / "shared" / "runs" / "r1"
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "metrics.jsonl").write_text(json.dumps({"step": 7, "loss": 2.5, "tokens_per_s": 1234.5}) + "\n")
    (run_dir / "events.jsonl").write_text("".join(json.dumps({"event": e, "t": 1}) + "\n"
                                                  for e in ("launched", "stalled", "restart", "stalled")))
    rec = RunRecord(id="r1", launch=LaunchSpec(program="t.py"), name="t", cluster="c1", world_size=2,
                    status="running", attempts=(Attempt(1), Attempt(2), Attempt(3)), last_checkpoint_step=4,
                    shrinks=({"lost": ["node2"]},))
    saved = {}
    return SimpleNamespace(record=rec, run_dir=run_dir, save=lambda **kw: saved.update(kw)), saved


def test_run_families_and_the_file_sd_entry(tmp_path, monkeypatch):
    sup, saved = fake_sup(tmp_path)
    exp = RunExporter(sup)
    exp.commit_seen()
    text = prom.render(exp.collect())
    me = 'run="r1",cluster="c1",name="t"'
    for line in (f"dscluster_run_step{{{me}}} 7.0", f"dscluster_run_loss{{{me}}} 2.5",
                 f"dscluster_run_tokens_per_second{{{me}}} 1234.5", f"dscluster_run_restarts_total{{{me}}} 2.0",
                 f"dscluster_run_stalls_total{{{me}}} 2.0", f"dscluster_run_shrinks_total{{{me}}} 1.0",
                 f"dscluster_run_checkpoint_commits_total{{{me}}} 1.0", f"dscluster_run_world_size{{{me}}} 2.0",
                 f"dscluster_run_last_checkpoint_step{{{me}}} 4.0", f'dscluster_run_info{{{me},status="running"}} 1.0'):
        assert line in text.splitlines(), (line, text)
    monkeypatch.setenv("DSCLUSTER_METRICS_PORT", "0")
    exp.start()
    try:
        target = tmp_path / "shared" / "prometheus" / "runs" / "r1.json"
        entry = json.loads(target.read_text())
        assert entry == [{"targets": [f"127.0.0.1:{exp.server.port}"], "labels": {"run": "r1", "cluster": "c1"}}]
        assert saved["metrics_url"] == f"http://127.0.0.1:{exp.server.port}/metrics"
        with urllib.request.urlopen(saved["metrics_url"], timeout=10) as resp:
            assert "dscluster_run_step" in resp.read().decode()
    finally:
        exp.stop()
    assert not target.exists() and exp.server is None
    monkeypatch.setenv("DSCLUSTER_METRICS_PORT", "off")
    exp.start()
    assert exp.server is None


def test_scrape_config_names_every_node_and_the_runs_file_sd(tmp_path):
    from dscluster.cluster.spec import ClusterSpec, NodeSpec
    from dscluster.commands.metrics import scrape_config

    spec = ClusterSpec(name="lab", nodes=(NodeSpec("10.0.0.1", 8, "gpu1"), NodeSpec("10.0.0.2", 8, "gpu2")),
                       shared_dir=tmp_path, ssh_user="u")
    text = scrape_config(spec, "5s")
    assert '- targets: ["10.0.0.1:9410"]' in text and 'labels: {node: "gpu2", cluster: "lab"}' in text
    assert f'files: ["{tmp_path}/prometheus/runs/*.json"]' in text and "scrape_interval: 5s" in text
    yaml = pytest.importorskip("yaml")
    data = yaml.safe_load(text)
    assert [j["job_name"] for j in data["scrape_configs"]] == ["dscluster-nodes", "dscluster-runs"]


def test_the_grafana_dashboard_queries_only_series_the_exporters_write(tmp_path):
    dash = json.loads((ROOT / "docs" / "grafana" / "dscluster.json").read_text())
    sup, _ = fake_sup(tmp_path)
    written = {f.name for f in [*node_families(SAMPLE, "n"), *RunExporter(sup).collect()]}
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["definition"] for v in dash["templating"]["list"] if v.get("definition")]
    used = {m for e in exprs for m in re.findall(r"\b(dscluster_[a-z0-9_]+)", e)}
    assert len(exprs) >= 15 and used and used <= written, used - written
    assert {"dscluster_gpu_utilization_ratio", "dscluster_run_step", "dscluster_run_restarts_total"} <= used
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
