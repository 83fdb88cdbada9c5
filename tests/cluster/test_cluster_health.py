"""Cluster health on the simulated 3-node cluster (root: network namespaces, real sshd, pdsh, DeepSpeed's
launcher, gloo on CPU): node1's link is slowed both ways with `tc tbf` (on the bridge side of its veth
and on its eth0), like a degraded NIC or cable.

- `doctor --collective` names node1 (its figure beside the others') and not the healthy nodes;
- `launch --exclude-unhealthy` leaves node1 out on that evidence and trains on node0 and node2;
- a run launched with --allow-shrink --exclude-unhealthy whose rank on node1 fails restarts without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
TRAIN = ["--preset", "tiny", "--log-interval", "1", "--eval-interval", "0", "--sample-tokens", "8", "--seq-len", "64"]


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="health")


@pytest.fixture(scope="module")
def env(sim, tmp_path_factory):
    e = dict(os.environ)
    e["DSCLUSTER_HOME"] = str(tmp_path_factory.mktemp("healthhome"))  # doctor's verdicts and baseline
    e["DSCLUSTER_LANG"] = "en"
    e.pop("DSCLUSTER_SHARED", None)
    return e


def cli(sim, env, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dscluster.cli", *args], env=env, cwd=str(sim.spec.shared_dir),
                          capture_output=True, text=True, timeout=timeout)


def test_doctor_names_the_slowed_node_with_its_figure_beside_the_others(sim, env):
    sim.slow("node1", rate="50mbit")
    res = cli(sim, env, "doctor", "--cluster", str(sim.spec_path), "--collective", "--collective-mb", "2", "--json")
    data = json.loads(res.stdout)
    assert res.returncode != 0, res.stdout[-3000:]
    bw = {r["node"]: r for r in data["results"] if r["check"] == "bandwidth"}
    assert bw["node1"]["status"] == "fail", bw
    assert bw["node0"]["status"] == "ok" and bw["node2"]["status"] == "ok", bw
    figures = {n: bw[n]["details"]["gbs"] for n in ("node0", "node1", "node2")}
    assert figures["node1"] < 0.5 * min(figures["node0"], figures["node2"]), figures
    assert figures["node1"] < 0.02  # 50 Mbit/s = 0.00625 GB/s (what tbf lets through)
    assert "node0↔node1" in bw["node1"]["finding"] and "node0 " in bw["node1"]["finding"]
    assert "sim heal" in bw["node1"]["fix"] and "node1" in bw["node1"]["fix"]
    coll = next(r for r in data["results"] if r["check"] == "collective")
    assert coll["status"] == "ok"  # the group forms: a slow link is not a broken one
    text = cli(sim, env, "doctor", "--cluster", str(sim.spec_path), "--collective", "--collective-mb", "2")
    assert "Bandwidth per node" in text.stdout and "node1 · bandwidth" in text.stdout, text.stdout
    print(f"link figures GB/s: {figures}")
