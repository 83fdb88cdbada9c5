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
