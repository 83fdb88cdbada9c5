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
from pathlib import Path

import pytest
from polling import logs_tail, sim_cli, wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
TRAIN = ["--preset", "tiny", "--log-interval", "1", "--eval-interval", "0", "--sample-tokens", "8", "--seq-len", "64"]


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="health")


@pytest.fixture(scope="module")
def env(env):
    return {**env, "DSCLUSTER_LANG": "en"}  # DSCLUSTER_HOME: doctor's verdicts and baseline


def test_doctor_names_the_slowed_node_with_its_figure_beside_the_others(sim, env):
    sim.slow("node1", rate="50mbit")
    res = sim_cli(sim, env, "doctor", "--cluster", str(sim.spec_path), "--collective", "--collective-mb", "2", "--json")
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
    text = sim_cli(sim, env, "doctor", "--cluster", str(sim.spec_path), "--collective", "--collective-mb", "2")
    assert "Bandwidth per node" in text.stdout and "node1 · bandwidth" in text.stdout, text.stdout
    print(f"link figures GB/s: {figures}")


@pytest.fixture(scope="module")
def inputs(sim):
    from dscluster.data.corpus import ensure_stdlib_corpus

    shared = Path(sim.spec.shared_dir)
    data, _ = ensure_stdlib_corpus(shared)
    cfg = shared / "health_ds_config.json"
    cfg.write_text(json.dumps({"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1,
                               "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
                               "zero_optimization": {"stage": 1}, "steps_per_print": 1000000}))
    for path in [data, *data.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return ["--data", str(data), *TRAIN], str(cfg)


def finished(run_dir: Path, timeout: float) -> dict | None:
    return wait_for(lambda: (r := store.read_record(run_dir).to_json())["status"] in store.FINISHED and r, timeout, 1)


def test_launch_with_exclude_unhealthy_runs_on_the_other_nodes_and_status_says_why(sim, env, inputs):
    args, cfg = inputs
    res = sim_cli(sim, env, "launch", "--cluster", str(sim.spec_path), "--detach", "--exclude-unhealthy", "--name",
                  "healthy", "-m", "dscluster.train", *args, "--steps", "3", "--deepspeed", "--deepspeed_config", cfg)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "node1 left out (--exclude-unhealthy)" in res.stderr + res.stdout, res.stderr
    run_id = [line for line in res.stdout.splitlines() if line.strip()][-1].strip()
    run_dir = store.run_path(sim.spec.shared_dir, run_id)
    rec = finished(run_dir, 300)
    assert rec and rec["status"] == "succeeded", logs_tail(run_dir)
    assert rec["world_size"] == 2 and "node1" not in rec["attempts"][0]["rank_nodes"], rec["attempts"]
    assert [e["node"] for e in rec["excluded"]] == ["node1"] and rec["excluded"][0]["source"] == "doctor"
    assert "bandwidth" in rec["excluded"][0]["evidence"]
    assert rec["launch"]["exclude_unhealthy"] is True and "node1" not in rec["hostfile"]
    assert rec["batch_plan"]["kept"] and rec["batch_plan"]["after"]["world"] == 2  # the global batch of 3 nodes
    status = sim_cli(sim, env, "status", run_id, "--cluster", str(sim.spec_path)).stdout
    assert "node1 left out (--exclude-unhealthy): doctor" in status and "bandwidth" in status, status


def test_a_restart_after_a_failure_on_a_node_leaves_it_out_with_allow_shrink(sim, env, inputs):
    args, cfg = inputs
    sim.heal("node1")  # full speed again: a fresh doctor clears node1's verdict
    res = sim_cli(sim, env, "doctor", "--cluster", str(sim.spec_path))
    assert res.returncode == 0, res.stdout[-2000:]
    res = sim_cli(sim, env, "launch", "--cluster", str(sim.spec_path), "--detach", "--exclude-unhealthy",
                  "--allow-shrink", "--max-restarts", "1", "--restart-wait", "3", "--name", "leaveout",
                  "-m", "dscluster.train", *args, "--steps", "14", "--save-interval", "4", "--step-sleep", "0.4",
                  "--deepspeed", "--deepspeed_config", cfg)
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = [line for line in res.stdout.splitlines() if line.strip()][-1].strip()
    run_dir = store.run_path(sim.spec.shared_dir, run_id)
    assert store.read_record(run_dir).world_size == 3
    assert wait_for(lambda: (store.read_record(run_dir).last_checkpoint_step or 0) >= 4, 300, 0.3), logs_tail(run_dir)
    killed = sim.exec("node1", ["pkill", "-9", "-f", "[-]u -m dscluster.train"])  # the rank, not launch.py
    assert killed.returncode == 0, killed.stderr
    rec = finished(run_dir, 300)
    assert rec and rec["status"] == "succeeded", logs_tail(run_dir)
    assert len(rec["attempts"]) == 2 and "node1" in rec["attempts"][0]["rank_nodes"]
    assert "node1" not in rec["attempts"][1]["rank_nodes"] and len(rec["attempts"][1]["rank_nodes"]) == 2
    shrink = next(e for e in store.read_events(run_dir) if e["event"] == "shrink")
    assert shrink["lost"] == ["node1"] and "left out after the failure there" in shrink["text"], shrink
    status = sim_cli(sim, env, "status", run_id, "--cluster", str(sim.spec_path)).stdout
    assert "node1 left out after the failure there" in status, status
    # and the next launch with --exclude-unhealthy leaves node1 out on that run's evidence
    res = sim_cli(sim, env, "launch", "--cluster", str(sim.spec_path), "--dry-run", "--exclude-unhealthy",
                  "-m", "dscluster.train", *args, "--steps", "2", "--deepspeed", "--deepspeed_config", cfg)
    assert res.returncode == 0 and "node1" not in res.stdout.split("hostfile", 1)[-1].split("\n\n")[0], res.stdout
