"""The panel's API on a simulated 2-node cluster: nodes come from the spec, their resource samples
from what each node publishes (nodestats, run inside the node as the node user), and a launch from
the API runs the demo across both nodes through the supervisor."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

from labserver import start_lab

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]


@pytest.fixture(scope="module")
def sim():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, sshd)")
    from dscluster.sim import SimCluster

    home = Path(tempfile.mkdtemp(prefix="dsc-h6-", dir="/var/tmp"))
    os.chmod(home, 0o755)  # the node user must traverse it to reach the shared dir
    cluster = SimCluster.up("h6panel", 2, home=home)
    try:
        yield cluster
    finally:
        cluster.down(purge=True)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def sim_lab(sim, tmp_path_factory):
    server = start_lab(tmp_path_factory.mktemp("simlab"), extra_env={"DSCLUSTER_CLUSTER": str(sim.spec_path)})
    yield server
    server.stop()


def test_nodes_show_samples_published_inside_each_node(sim, sim_lab):
    spec = sim.spec
    for node in spec.nodes:
        res = sim.exec(node.name, [sys.executable, "-m", "dscluster.jupyter.nodestats", "--shared",
                                   str(spec.shared_dir), "--node", node.name, "--interval", "0.2", "--count", "1"],
                       user=spec.ssh_user, timeout=60)
        assert res.returncode == 0, res
    body = sim_lab.api("GET", "cluster").json()
    assert body["name"] == "h6panel" and body["source"] == "spec"
    nodes = {n["name"]: n for n in body["nodes"]}
    assert set(nodes) == {n.name for n in spec.nodes}
    for node in spec.nodes:
        info = nodes[node.name]
        assert info["address"] == node.address and info["local"] is False
        assert info["sample"]["source"] == "agent" and info["sample"]["stale"] is False
        assert info["sample"]["host"] == node.name  # sampled inside the node (its own UTS hostname)


def test_launch_from_the_api_runs_across_the_nodes(sim, sim_lab):
    body = {"script": "-m dscluster.train", "max_restarts": 0,
            "args": "--preset tiny --steps 4 --log-interval 1 --sample-tokens 0 --eval-batches 1",
            "config": '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1}'}
    res = sim_lab.api("POST", "runs", body, timeout=180)
    assert res.status == 201, res.body
    run_id = res.json()["id"]
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline:
        run = sim_lab.api("GET", f"runs/{run_id}").json()
        if run["run"]["status"] in ("succeeded", "failed", "stopped"):
            break
        time.sleep(2)
    assert run["run"]["status"] == "succeeded", run
    assert run["run"]["world_size"] == 2 and run["run"]["cluster"] == "h6panel"
    assert len([f for f in run["logs"] if "rank" in f["name"]]) >= 1
    losses = [r for r in sim_lab.api("GET", f"runs/{run_id}/metrics").json()["records"] if "loss" in r]
    assert len(losses) >= 4
