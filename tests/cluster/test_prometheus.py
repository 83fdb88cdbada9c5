"""A real Prometheus (Debian's package) scrapes a simulated 2-node cluster during a run: the node agents'
/metrics (:9410 in each node's network namespace) and the run's supervisor (found through the file_sd
entry it writes in <shared>/prometheus/runs/), with the scrape config `dscluster metrics config` prints.
Its query API must return the run's steps and every node's series; the last step is scraped before the
supervisor's endpoint goes away. Prometheus runs on a free port with a temporary config and storage and
is stopped by its PID.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from polling import sim_cli, wait_for
from support import free_port

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
TRAIN = ["--preset", "tiny", "--log-interval", "1", "--eval-interval", "0", "--sample-tokens", "8", "--seq-len", "64"]
STEPS = 8


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(2, name="prom")


@pytest.fixture(scope="module")
def env(env):
    e = dict(env, DSCLUSTER_LANG="en")
    e.pop("DSCLUSTER_METRICS_PORT", None)
    return e


@pytest.fixture(scope="module")
def prometheus(sim, env, tmp_path_factory):
    exe = shutil.which("prometheus")
    if exe is None:
        pytest.skip("Debian's prometheus package is not installed (scripts/setup.sh test installs it)")
    work = tmp_path_factory.mktemp("prometheus")
    res = sim_cli(sim, env, "metrics", "config", "--cluster", str(sim.spec_path), "--interval", "1s")
    assert res.returncode == 0, res.stderr
    (work / "prometheus.yml").write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n" + res.stdout)
    port = free_port()
    log = open(work / "prometheus.log", "wb")
    proc = subprocess.Popen([exe, f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"

    def ready():
        try:
            with urllib.request.urlopen(base + "/-/ready", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return proc.poll() is not None  # exited: stop waiting, the assert below says so
    try:
        assert wait_for(ready, 60, 0.2) and proc.poll() is None, (work / "prometheus.log").read_text()[-3000:]
        yield base, work
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


def query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as resp:
        data = json.load(resp)
    assert data["status"] == "success", data
    return data["data"]["result"]


def test_prometheus_scrapes_every_node_and_the_run(sim, env, prometheus):
    base, work = prometheus
    nodes = set(sim.nodes)
    # every node agent, as its own target
    up = wait_for(lambda: {r["metric"]["node"] for r in query(base, 'dscluster_node_up{job="dscluster-nodes"} == 1')}
                  == nodes, 60, 0.5)
    assert up, (query(base, "up"), (work / "prometheus.log").read_text()[-2000:])
    mem = query(base, "dscluster_node_memory_total_bytes")
    assert {r["metric"]["node"] for r in mem} == nodes and all(float(r["value"][1]) > 0 for r in mem)
    assert {r["metric"]["cluster"] for r in mem} == {sim.name}

    from dscluster.data.corpus import ensure_stdlib_corpus

    shared = Path(sim.spec.shared_dir)
    data, _ = ensure_stdlib_corpus(shared)
    for path in [data, *data.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    res = sim_cli(sim, env, "launch", "--cluster", str(sim.spec_path), "--detach", "--skip-doctor", "--name", "prom",
                  "-m", "dscluster.train", "--data", str(data), *TRAIN, "--steps", str(STEPS), "--save-interval", "4",
                  "--step-sleep", "0.5")
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = [ln for ln in res.stdout.splitlines() if ln.strip()][-1].strip()
    run_dir = store.run_path(shared, run_id)
    sel = f'{{run="{run_id}",job="dscluster-runs"}}'
    stepping = wait_for(lambda: [float(r["value"][1]) for r in query(base, f"dscluster_run_step{sel}")
                                 if float(r["value"][1]) >= 1], 300, 0.5)
    assert stepping, (store.read_record(run_dir).to_json(), (work / "prometheus.log").read_text()[-2000:])
    target = shared / "prometheus" / "runs" / f"{run_id}.json"
    entry = json.loads(target.read_text())
    assert entry[0]["labels"] == {"run": run_id, "cluster": sim.name}
    assert store.read_record(run_dir).to_json()["metrics_url"].startswith("http://127.0.0.1:")
    rec = wait_for(lambda: (r := store.read_record(run_dir).to_json())["status"] in store.FINISHED and r, 300, 1)
    assert rec and rec["status"] == "succeeded", rec
    assert wait_for(lambda: not target.exists(), 60, 0.5), "the file_sd entry outlived the run"
    # the final figures were scraped before the endpoint went away
    last = query(base, f"max_over_time(dscluster_run_step{sel}[10m])")
    assert last and float(last[0]["value"][1]) == STEPS, last
    commits = query(base, f"max_over_time(dscluster_run_checkpoint_commits_total{sel}[10m])")
    assert commits and float(commits[0]["value"][1]) >= 2, commits  # step-4 and step-8
    assert query(base, f"max_over_time(dscluster_run_tokens_per_second{sel}[10m]) > 0")
    assert query(base, f'max_over_time(dscluster_run_info{{run="{run_id}",status="running"}}[10m])')
    print(f"Prometheus saw run {run_id} reach step {STEPS} and nodes {sorted(nodes)}")
