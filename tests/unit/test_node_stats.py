"""Node resource samples: CPU as a delta between readings, memory from /proc, GPUs only with NVML,
published atomically and marked stale when a node stops publishing."""

from __future__ import annotations

import json
import time

from dscluster.node import stats as nodestats


def test_sample_has_cpu_delta_memory_and_no_gpus_without_nvml():
    sampler = nodestats.Sampler()
    sum(i * i for i in range(200_000))  # some CPU time between the two readings
    sample = sampler.sample("n0")
    assert sample["node"] == "n0" and sample["time"] > 0
    assert sample["cpu"]["percent"] is None or 0 <= sample["cpu"]["percent"] <= 100
    assert sample["memory"]["total"] > sample["memory"]["used"] > 0
    if not sample["nvml"]:
        assert sample["gpus"] == []
    json.dumps(sample)  # publishable as is


def test_publish_and_read_marks_stale_samples(tmp_path):
    sample = nodestats.Sampler(gpu=False).sample("n1")
    path = nodestats.publish(tmp_path, "n1", sample)
    assert path == tmp_path / "nodes" / "n1.json" and oct(path.stat().st_mode & 0o777) == "0o644"
    fresh = nodestats.read_published(tmp_path, "n1")
    assert fresh["stale"] is False and fresh["memory"] == sample["memory"]
    old = nodestats.read_published(tmp_path, "n1", now=time.time() + nodestats.STALE_AFTER_S + 5)
    assert old["stale"] is True
    assert nodestats.read_published(tmp_path, "never-published") is None
    (tmp_path / "nodes" / "torn.json").write_text('{"time": ')
    assert nodestats.read_published(tmp_path, "torn") is None


def test_publisher_cli_writes_count_samples(tmp_path):
    assert nodestats.main(["--shared", str(tmp_path), "--node", "n2", "--interval", "0.01", "--count", "2"]) == 0
    assert nodestats.read_published(tmp_path, "n2")["node"] == "n2"


def test_history_of_a_real_h200_recording_becomes_one_series_per_gpu(tmp_path):
    """The fixture is the sampler's own output, recorded on an H200 while the trainer ran."""
    import json
    from pathlib import Path

    from dscluster.node import stats

    rows = [json.loads(x) for x in (Path(__file__).parents[1] / "data" / "nvml_h200_training.jsonl").read_text().splitlines()]
    assert set(rows[0]) >= {"node", "time", "cpu", "memory", "gpus", "nvml"} and rows[0]["nvml"] is True
    path = stats.history_path(tmp_path, "h200-0")
    for r in rows:
        stats.append_history(path, r)
    now = rows[-1]["time"]
    got = stats.read_history(path, now=now, window_s=60, max_points=1000)
    assert got and all(now - 60 <= s["time"] <= now for s in got) and got[-1] == rows[-1]
    thinned = stats.read_history(path, now=now, window_s=10**6, max_points=50)
    assert len(thinned) == 50 and thinned[0] == rows[0] and thinned[-1] == rows[-1]
    series = stats.gpu_series(thinned)
    assert len(series["time"]) == 50 and [g["index"] for g in series["gpus"]] == [0]
    gpu = series["gpus"][0]
    assert max(gpu["util"]) == 100 and max(gpu["power_w"]) > 500 and gpu["name"] == "NVIDIA H200"


def test_history_file_is_cut_to_its_newer_half_past_the_limit(tmp_path):
    from dscluster.node import stats

    path = tmp_path / "n.history.jsonl"
    for i in range(200):
        stats.append_history(path, {"time": float(i), "gpus": []}, max_bytes=2000)
    assert path.stat().st_size <= 2000
    got = stats.read_history(path, now=199.0, window_s=1000)
    assert got[-1]["time"] == 199.0 and got[0]["time"] > 0 and len(got) > 10
