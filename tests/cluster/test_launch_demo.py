"""`dscluster demo --nodes 2`: the demo on a simulated cluster it brings up itself, supervised."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
SIM = "h4demo"


@pytest.fixture
def home():
    path = Path(tempfile.mkdtemp(prefix="dsc-h4demo-", dir="/var/tmp"))
    os.chmod(path, 0o755)  # the node user traverses it to the simulated shared dir
    yield path
    subprocess.run([sys.executable, "-m", "dscluster.cli", "sim", "down", "--name", SIM, "--purge"],
                   env={**os.environ, "DSCLUSTER_HOME": str(path)}, capture_output=True, timeout=120)
    subprocess.run(["rm", "-rf", str(path)], timeout=60)


def test_demo_on_two_simulated_nodes_through_the_supervisor(home):
    env = {**os.environ, "DSCLUSTER_HOME": str(home), "CUDA_VISIBLE_DEVICES": ""}
    env.pop("DSCLUSTER_SHARED", None)
    proc = subprocess.run([sys.executable, "-m", "dscluster.cli", "demo", "--nodes", "2", "--sim-name", SIM, "--cpu",
                           "--steps", "6", "--save-interval", "3", "--max-restarts", "0"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "world size 2" in proc.stdout and "loss:" in proc.stdout and "Next:" in proc.stdout
    runs = list((home / "sims" / SIM / "shared" / "runs").iterdir())
    assert len(runs) == 1
    record = json.loads((runs[0] / "run.json").read_text())
    assert record["status"] == "succeeded" and record["cluster"] == SIM and record["last_checkpoint_step"] == 6
    assert len(set(record["attempts"][0]["rank_nodes"])) == 2  # one rank on each node
