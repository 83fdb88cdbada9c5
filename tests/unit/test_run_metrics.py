"""One metrics file and one reader: dscluster.log for a user's script, DeepSpeed's csv monitor copied in."""

from __future__ import annotations

import json

import pytest

from dscluster.runs.preparing.program import with_monitor
from dscluster.runs.records import metrics


def test_log_is_a_no_op_outside_a_run_and_on_other_ranks(tmp_path, monkeypatch):
    monkeypatch.delenv("DSCLUSTER_RUN_DIR", raising=False)
    assert metrics.log(step=1, loss=2.0) is False
    monkeypatch.setenv("DSCLUSTER_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("RANK", "1")
    assert metrics.log(step=1, loss=2.0) is False
    assert not (tmp_path / "metrics.jsonl").exists()


def test_log_on_rank_0_is_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("DSCLUSTER_RUN_DIR", str(tmp_path))
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setattr(metrics, "_writer", None)

    class Scalar:  # a tensor-like value
        def item(self):
            return 0.5

    assert metrics.log(step=3, loss=Scalar(), note="x", skipped=object())
    records, offset = metrics.read(tmp_path)
    assert records[0]["step"] == 3 and records[0]["loss"] == 0.5 and records[0]["note"] == "x"
    assert "skipped" not in records[0] and offset > 0
    assert metrics.last(tmp_path)["loss"] == 0.5


def test_deepspeeds_csv_monitor_becomes_records(tmp_path):
    mon = tmp_path / "monitor" / "deepspeed"
    mon.mkdir(parents=True)
    (mon / "Train_Samples_lr.csv").write_text("step,lr\n8,0.1\n16,0.09\n")
    (mon / "Train_Samples_elapsed_time_ms_step.csv").write_text("step,elapsed_time_ms_step\n8,12.5\n")
    bridge = metrics.MonitorBridge(tmp_path, train_batch_size=8)
    assert bridge.tick() == 2 and bridge.tick() == 0
    with open(mon / "Train_Samples_lr.csv", "a") as f:
        f.write("24,0.08\n")
    assert bridge.tick() == 1
    records, _ = metrics.read(tmp_path)
    assert [(r["step"], r["lr"]) for r in records] == [(1, 0.1), (2, 0.09), (3, 0.08)]
    assert records[0]["elapsed_time_ms_step"] == 12.5


def test_the_monitor_is_added_only_when_the_users_config_has_none(tmp_path):
    args = ["--deepspeed", "--deepspeed_config", "ds.json", "--x"]
    out, text = with_monitor(args, {"train_batch_size": 4}, tmp_path, reference=False)
    assert out == ["--deepspeed", "--deepspeed_config", str(tmp_path / "ds_config.json"), "--x"]
    assert json.loads(text)["csv_monitor"]["output_path"] == str(tmp_path / "monitor")
    out, _ = with_monitor(["--deepspeed_config=ds.json"], {}, tmp_path, reference=False)
    assert out == [f"--deepspeed_config={tmp_path / 'ds_config.json'}"]
    own = {"tensorboard": {"enabled": True, "output_path": "tb"}}
    assert with_monitor(args, own, tmp_path, reference=False) == (args, None)
    assert with_monitor(args, {}, tmp_path, reference=True) == (args, None)
    assert with_monitor(["x"], None, tmp_path, reference=False) == (["x"], None)


def test_deepspeeds_monitor_values_reach_tensorboard(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    mon = tmp_path / "monitor" / "deepspeed"
    mon.mkdir(parents=True)
    (mon / "Train_Samples_lr.csv").write_text("step,lr\n4,0.25\n8,0.5\n")
    metrics.MonitorBridge(tmp_path, train_batch_size=4).tick()
    files = list((tmp_path / "tensorboard" / "deepspeed").glob("events.out.tfevents.*"))
    assert len(files) == 1
    acc = event_accumulator.EventAccumulator(str(files[0].parent))
    acc.Reload()  # TensorBoard's own reader
    assert [(e.step, e.value) for e in acc.Scalars("train/lr")] == [(1, 0.25), (2, 0.5)]


def test_latest_merges_a_scripts_loss_with_deepspeeds_values(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [{"step": 1, "loss": 2.0}, {"step": 1, "samples": 4, "lr": 0.1, "source": "deepspeed"},
             {"step": 2, "samples": 8, "lr": 0.2, "source": "deepspeed"}, {"event": "done", "step": 9}, "torn {"]
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines))
    got = metrics.latest(tmp_path)
    assert got["step"] == 2 and got["loss"] == 2.0 and got["lr"] == 0.2
    assert metrics.latest(tmp_path / "nope") is None
