"""The panel's API on a simulated 2-node cluster: nodes come from the spec, their resource samples
from what each node's agent publishes (dscluster.node.stats, inside the node as the node user), and a launch from
the API runs the demo across both nodes through the supervisor."""

from __future__ import annotations

import os
import shutil
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
    cluster = SimCluster.up("h6panel" + os.environ.get("DSCLUSTER_SIM_SALT", ""), 2, home=home)
    try:
        # No publisher is started here: each node's agent publishes its own sample (node/stats.py).
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
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body = sim_lab.api("GET", "cluster").json()
        if all(n["sample"] for n in body["nodes"]):
            break
        time.sleep(0.5)
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


@pytest.mark.browser
def test_panel_shows_every_node_of_the_simulated_cluster(sim, sim_lab):
    sync_api = pytest.importorskip("playwright.sync_api")
    from labserver import REPO

    shots = REPO / "test-artifacts" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=os.environ.get("DSCLUSTER_CHROMIUM", "/usr/bin/chromium"),
                                     args=args, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(90_000)
            page.goto(f"{sim_lab.url}/lab?token={sim_lab.token}")
            page.locator('.jp-SideBar .lm-TabBar-tab[data-id="dscluster-panel"]').click()
            for node in sim.spec.nodes:
                page.locator(f'#dscluster-panel .dsc-node[data-node="{node.name}"]').wait_for()
            assert "h6panel" in page.locator("#dscluster-panel .dsc-cluster h3").inner_text()
            page.locator("#dscluster-panel .dsc-run-row").first.wait_for()  # the run launched above
            assert page.locator("#dscluster-panel .dsc-node.dsc-stale").count() == 0  # agents publish live
            page.screenshot(path=str(shots / "sim-cluster--panel.png"))
        finally:
            browser.close()


def test_notebook_cluster_and_doctor_on_the_simulated_cluster(sim):
    import dscluster

    cluster = dscluster.Cluster(str(sim.spec_path))
    assert cluster.name == "h6panel" and [n["name"] for n in cluster.nodes] == [n.name for n in sim.spec.nodes]
    assert "node1" in cluster._repr_html_()
    report = cluster.doctor(fast=True)
    page = report._repr_html_()
    assert report.results and "node0" in page and "✓" in page
    failed = [r for r in report.results if not r.ok and not r.skipped and r.severity == "error"]
    assert report.ok == (not failed), failed
