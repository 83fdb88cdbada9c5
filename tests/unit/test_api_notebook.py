"""The notebook API on run directories written like the supervisor and trainer write them."""

from __future__ import annotations

import sys

import pytest

import dscluster
from dscluster.errors import UsageError
from dscluster.fsutil import append_jsonl, atomic_write_json
from dscluster.jupyter.rundata import RunNotFound

RUN_ID = "demo-20260101-120000-ab12"


@pytest.fixture
def run_dir(dscluster_home, tmp_path):
    run = tmp_path / "shared" / "runs" / RUN_ID
    (run / "logs").mkdir(parents=True)
    atomic_write_json(run / "run.json", {"id": RUN_ID, "name": "demo", "status": "running", "attempts": [{"n": 1}],
                                         "launch": {"args": ["--steps", "10"]}})
    for step in (1, 2, 3):
        append_jsonl(run / "metrics.jsonl", {"step": step, "loss": 4.0 - step, "tokens_per_s": 10.0})
    append_jsonl(run / "metrics.jsonl", {"step": 3, "val_loss": 2.5})
    (run / "logs" / "20260101_rank0.log").write_text("".join(f"line {i}\n" for i in range(300)))
    (run / "logs" / "20260101_rank1.log").write_text("other rank\n")
    (run / "logs" / "launcher.log").write_text("launcher\n")
    return run


def test_import_is_lazy():
    code = "import sys, dscluster; assert 'dscluster.api' not in sys.modules; dscluster.Cluster; " \
           "assert 'dscluster.api' in sys.modules"
    import subprocess

    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_run_metrics_logs_and_html(run_dir):
    run = dscluster.Run(RUN_ID)
    assert run.status == "running" and not run.done
    df = run.metrics()
    assert list(df["step"]) == [1, 2, 3, 3] and df["loss"].iloc[2] == 1.0 and df["val_loss"].iloc[3] == 2.5
    assert run.logs(rank=0, tail=2) == "line 298\nline 299"
    assert run.logs(rank=1) == "other rank"
    assert run.logs(name="launcher.log") == "launcher"
    page = run._repr_html_()
    assert RUN_ID in page and 'data-points="3"' in page and "3/10" in page


def test_unknown_or_unsafe_run_ids_raise_typed_errors(run_dir):
    with pytest.raises(RunNotFound):
        dscluster.Run("nope-20260101-000000-0000")
    with pytest.raises(UsageError):
        dscluster.Run("../etc")


def test_local_cluster_lists_this_machine(dscluster_home, monkeypatch, tmp_path):
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    monkeypatch.chdir(tmp_path)
    cluster = dscluster.Cluster()
    nodes = cluster.nodes
    if cluster._view.source == "local":  # no simulated "default" cluster running on this machine
        assert len(nodes) == 1 and nodes[0]["sample"]["memory"]["total"] > 0
        assert "<table>" in cluster._repr_html_()
        with pytest.raises(dscluster.api.ConfigError):
            cluster.doctor()


def test_watch_widget_renders_progress_and_curve(run_dir):
    pytest.importorskip("ipywidgets")
    run = dscluster.Run(RUN_ID)
    watcher = run.watch(interval=0.05)
    try:
        assert watcher.progress.max == 10 and watcher.progress.value == 3
        assert 'data-points="3"' in watcher.chart.value
        assert "line 299" in watcher.log.value
        atomic_write_json(run_dir / "run.json", {**run.record, "status": "succeeded"})
        watcher.join(timeout=5)
        assert "succeeded" in watcher.status.value or "成功" in watcher.status.value
    finally:
        watcher.stop()


def test_notebook_names_do_not_clash_with_packages():
    """`dscluster.launch` stays the notebook function whatever was imported before it."""
    import subprocess

    code = ("import dscluster.launcher.plan, dscluster.runs.records.store, dscluster; "
            "assert callable(dscluster.launch) and callable(dscluster.list_runs); "
            "from dscluster.api import launch; assert dscluster.launch is launch")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_cluster_html_shows_each_gpu():
    from dscluster.jupyter.notebook_view import cluster_html

    # A sample as NVML reported it on an H200 node (nodestats on the device machine).
    gpu = {"index": 0, "name": "NVIDIA H200", "util": 87, "mem_used": 644939776, "mem_total": 150754820096,
           "power_w": 612.5, "power_limit_w": 700.0, "temp_c": 61}
    info = {"name": "prod", "shared_dir": "/nfs/ds", "nodes": [
        {"name": "gpu0", "address": "10.0.0.1", "slots": 8, "sample": {"gpus": [gpu, {**gpu, "index": 1}]}},
        {"name": "gpu1", "address": "10.0.0.2", "slots": 8, "sample": None}]}
    page = cluster_html(info)
    assert "GPU0 NVIDIA H200: 87%" in page and "GPU1" in page and "612.5 W" in page and "61 °C" in page
    assert "140.4 GiB" in page and "gpu1" in page


def test_star_import_gives_exactly_the_notebook_api():
    import dscluster
    from dscluster import api

    names = {}
    exec("from dscluster.api import *", names)
    assert set(api.__all__) <= set(names) and set(dscluster._NOTEBOOK_API) == set(api.__all__)


def test_api_takes_run_prefixes_and_names_and_names_bad_arguments(dscluster_home, tmp_path):
    from dscluster.api import Cluster, Run
    from dscluster.errors import ConfigError, RunError
    from dscluster.runs.records import store
    from dscluster.runs.records.record import RunRecord

    shared = tmp_path / "shared"
    run_dir = store.create_run(shared, RunRecord.from_json({"id": store.new_run_id("named"), "name": "named", "argv": ["t.py"],
                                        "env": {}, "world_size": 1}))
    (run_dir / "logs" / "20261130_rank0.log").write_text("".join(f"line {i}\n" for i in range(5)))
    runs = [shared / "runs"]
    assert Run("named", runs).id == run_dir.name == Run(run_dir.name[:12], runs).id
    run = Run(run_dir.name, runs)
    assert run.logs(tail=2) == "line 3\nline 4" and run.logs(tail=0) == "" and run.logs(tail=None).count("line") == 5
    with pytest.raises(RunError, match="no rank 9") as err:
        run.logs(rank=9)
    assert "0" in err.value.hint
    with pytest.raises(ConfigError, match="tail"):
        run.logs(tail=-1)
    with pytest.raises(ConfigError, match="got int") as err:
        Cluster(42)
    assert err.value.setting == "cluster" and err.value.hint


def test_a_symlink_in_logs_is_not_served(dscluster_home, tmp_path):
    from dscluster.jupyter import rundata
    from dscluster.runs.records import store
    from dscluster.runs.records.record import RunRecord

    run_dir = store.create_run(tmp_path / "shared", RunRecord.from_json({"id": store.new_run_id("links"), "name": "links",
                                                     "argv": ["t.py"], "env": {}, "world_size": 1}))
    secret = tmp_path / "outside.txt"
    secret.write_text("not a log")
    (run_dir / "logs" / "evil.log").symlink_to(secret)  # a rank writing to shared storage could do this
    (run_dir / "logs" / "20261130_rank0.log").write_text("step 1\n")
    ref = rundata.RunRef(run_dir.name, run_dir)
    assert [f["name"] for f in rundata.log_files(ref)] == ["20261130_rank0.log"]
    with pytest.raises(rundata.RunNotFound):
        rundata.log_tail(ref, "evil.log")
