"""launcher/locallaunch.py: DeepSpeed launch.py's contract on one machine, with real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from dscluster.runs.verdict import first_rank_exit_code

RANK = """
import json, os, sys, time
keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_SIZE", "MASTER_ADDR", "MASTER_PORT", "CROSS_RANK",
        "CROSS_SIZE", "CUDA_VISIBLE_DEVICES")
print(json.dumps({"argv": sys.argv[1:], **{k: os.environ.get(k) for k in keys}}))
if os.environ["RANK"] == os.environ.get("FAIL_RANK"):
    sys.exit(17)
if os.environ.get("FAIL_RANK"):
    time.sleep(120)  # a sibling: must be terminated when the failing rank exits
"""


def launch(tmp_path, *extra: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    argv = [sys.executable, "-m", "dscluster.launcher.locallaunch", "--devices=1,3", "--master_port=29511",
            f"--enable_each_rank_log={tmp_path / 'logs'}", *extra, str(script), "--x", "1"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env={**env} if env else None)


def rank_lines(tmp_path) -> dict[int, dict]:
    out = {}
    for log in sorted((tmp_path / "logs").glob("*_rank*.log")):
        rank = int(log.stem.rsplit("_rank", 1)[1])
        out[rank] = json.loads(log.read_text().splitlines()[0])
    return out


def test_each_rank_gets_launch_pys_environment_and_its_own_log(tmp_path):
    done = launch(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = rank_lines(tmp_path)
    assert sorted(ranks) == [0, 1]
    for r, seen in ranks.items():
        assert seen["argv"] == [f"--local_rank={r}", "--x", "1"]
        assert (seen["RANK"], seen["LOCAL_RANK"]) == (str(r), str(r))
        assert (seen["WORLD_SIZE"], seen["LOCAL_SIZE"], seen["CROSS_RANK"], seen["CROSS_SIZE"]) == ("2", "2", "0", "1")
        assert (seen["MASTER_ADDR"], seen["MASTER_PORT"], seen["CUDA_VISIBLE_DEVICES"]) == ("127.0.0.1", "29511", "1,3")
    assert done.stdout.count("exits successfully.") == 2  # what the supervisor counts (reports_rank_exits)


def test_no_local_rank_and_quiet(tmp_path):
    done = launch(tmp_path, "--no_local_rank", "--quiet")
    assert done.returncode == 0 and "exits successfully" not in done.stdout
    assert rank_lines(tmp_path)[1]["argv"] == ["--x", "1"]


def test_a_failing_rank_ends_its_siblings_with_launch_pys_lines(tmp_path):
    done = launch(tmp_path, env={**os.environ, "FAIL_RANK": "1"})
    assert done.returncode == 17, done.stdout + done.stderr
    assert "Killing subprocess" in done.stdout and "[locallaunch.py:" in done.stdout
    assert "'--local_rank=1', '--x', '1'] exits with return code = 17" in done.stdout
    log = tmp_path / "launcher.log"
    log.write_text("attempt 1: ...\n" + done.stdout)
    assert first_rank_exit_code(log, {}, "attempt 1:") == 17  # read as the supervisor reads launch.py's
