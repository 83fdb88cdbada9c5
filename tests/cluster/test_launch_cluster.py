"""Supervised launches on the simulated 3-node cluster (root: network namespaces, real sshd, pdsh,
OpenMPI, DeepSpeed's own launcher, gloo on CPU). One cluster for the whole module.

Every "nothing is left" assertion reads each node's own process table (inside its PID namespace)
for processes carrying the run's DSCLUSTER_RUN_ID.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dscluster.runs import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
DATA = Path(__file__).resolve().parents[1] / "data"
SCRIPT = str(DATA / "min_ds_script.py")


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="h4launch")


@pytest.fixture(scope="module")
def env(sim, tmp_path_factory):
    e = dict(os.environ)
    e["DSCLUSTER_HOME"] = str(tmp_path_factory.mktemp("h4home"))
    e.pop("DSCLUSTER_SHARED", None)
    return e


class Cli:
    def __init__(self, sim, env):
        self.sim, self.env, self.cwd = sim, env, str(sim.spec.shared_dir)

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "dscluster.cli", *args]

    def __call__(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        if args and args[0] in ("status", "stop", "logs", "runs"):
            args = (*args, "--cluster", str(self.sim.spec_path))
        return subprocess.run(self.argv(*args), env=self.env, cwd=self.cwd, capture_output=True, text=True,
                              timeout=timeout)

    def launch(self, *args: str, detach: bool = True) -> str:
        res = self("launch", "--cluster", str(self.sim.spec_path), "--detach" if detach else "--attach", *args)
        assert res.returncode == 0, res.stdout + res.stderr
        return run_id_from(res.stdout)

    def run_dir(self, run_id: str) -> Path:
        return store.run_path(self.sim.spec.shared_dir, run_id)

    def record(self, run_id: str) -> dict:
        return store.read_record(self.run_dir(run_id))

    def node_pids(self, run_id: str) -> dict[str, list[int]]:
        """The run's processes as each node's own process table shows them (nsenter, not ssh)."""
        out = {}
        for node in self.sim.nodes:
            if not self.sim.is_running(node):
                out[node] = []
                continue
            res = self.sim.exec(node, [sys.executable, "-m", "dscluster.runs.reaper", run_id, "--list"], timeout=30)
            out[node] = [int(p) for p in res.stdout.split()]
        return out


def run_id_from(text: str) -> str:
    for line in text.splitlines():
        if " run " in line and " started on " in line:
            return line.split(" run ", 1)[1].split()[0]
    raise AssertionError(f"no run id in: {text}")


def wait_for(pred, timeout: float, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(interval)
    return pred()


def rank_lines(cli: Cli, run_id: str, rank: int) -> str:
    return "".join(p.read_text(errors="replace") for p in sorted((cli.run_dir(run_id) / "logs").glob(f"*_rank{rank}.log")))


def wait_training(cli: Cli, run_id: str, timeout: float = 300) -> None:
    ok = wait_for(lambda: all("step 1 " in rank_lines(cli, run_id, r) for r in range(3)), timeout, 0.5)
    assert ok, cli("logs", run_id).stdout[-3000:]


def all_gone(cli: Cli, run_id: str) -> bool:
    return not any(cli.node_pids(run_id).values())


@pytest.fixture(scope="module")
def cli(sim, env):
    return Cli(sim, env)


def test_user_script_runs_to_completion_with_pdsh(cli):
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--attach", "--max-restarts", "0",
              "--env", "HF_TOKEN=hf_s3cret", SCRIPT, "--steps", "3")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr
    run_id = run_id_from(res.stdout)
    for r, node in enumerate(["node0", "node1", "node2"]):
        assert f"[{node} {r}] step 2 loss" in res.stdout
    rec = cli.record(run_id)
    assert rec["status"] == "succeeded" and rec["exit_code"] == 0 and rec["world_size"] == 3
    assert rec["attempts"][0]["rank_nodes"] == ["node0", "node1", "node2"]
    run_dir = cli.run_dir(run_id)
    assert (run_dir / "hostfile").read_text() == "node0 slots=1\nnode1 slots=1\nnode2 slots=1\n"
    env_lines = (run_dir / "ds_env").read_text().splitlines()
    assert all(line and not line.startswith("#") for line in env_lines)
    assert any(line.startswith("PATH=" + str(Path(sys.executable).parent)) for line in env_lines)
    assert "hf_s3cret" not in (run_dir / "run.json").read_text() + (run_dir / "ds_env").read_text()
    assert "hf_s3cret" not in (run_dir / "logs" / "launcher.log").read_text()  # never on pdsh's command line
    assert all_gone(cli, run_id)


def test_openmpi_launcher(cli):
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--launcher", "openmpi", "--attach",
              "--max-restarts", "0", SCRIPT, "--steps", "3")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr
    run_id = run_id_from(res.stdout)
    assert res.stdout.count("step 2 loss") >= 3
    assert "--allow-run-as-root" in (cli.run_dir(run_id) / "logs" / "launcher.log").read_text()
    assert cli.record(run_id)["status"] == "succeeded"
    assert all_gone(cli, run_id)


def test_bad_input_is_refused_before_anything_starts(cli):
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--detach", "no_such_script.py")
    assert res.returncode == 3 and "does not exist" in res.stderr and "fix" in res.stderr
    res = cli("launch", "--cluster", str(cli.sim.spec_path), "--detach", "-m", "no_such_module_xyz")
    assert res.returncode == 3 and "cannot be imported" in res.stderr
    assert not list((cli.sim.spec.shared_dir / "runs").glob("no_such*"))


def test_partition_is_detected_torn_down_and_reported_within_60s(cli, sim):
    run_id = cli.launch("--max-restarts", "0", "--name", "part", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    sim.partition("node1")
    t0 = time.monotonic()
    try:
        rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 60)
        reported = time.monotonic() - t0
        assert rec, "not reported within 60 s"
        assert rec["status"] == "failed" and rec["exit_code"] != 0
        assert rec["explanation"]["signature"] == "node-lost" and "node1" in rec["attempts"][-1]["reason"]
        # the partitioned node's own watchdog reaps its ranks when the pings stop
        assert wait_for(lambda: all_gone(cli, run_id), 30), cli.node_pids(run_id)
        print(f"partition: reported after {reported:.1f}s, all gone after {time.monotonic() - t0:.1f}s")
    finally:
        sim.heal("node1")


def test_crashed_node_is_detected_and_reported(cli, sim):
    run_id = cli.launch("--max-restarts", "0", "--name", "crash", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    sim.crash("node2")
    t0 = time.monotonic()
    try:
        rec = wait_for(lambda: cli.record(run_id)["status"] in store.FINISHED and cli.record(run_id), 60)
        assert rec, "not reported within 60 s"
        assert rec["status"] == "failed"
        assert wait_for(lambda: all_gone(cli, run_id), 15), cli.node_pids(run_id)
        status = cli("status", run_id, "--json")
        view = json.loads(status.stdout)
        assert view["explanation"]["cause"] and view["explanation"]["fix"]
        print(f"crash: reported after {time.monotonic() - t0:.1f}s ({view['explanation']['signature']})")
    finally:
        sim.heal("node2")


def test_supervisor_sigkill_leaves_no_rank_anywhere(cli):
    run_id = cli.launch("--max-restarts", "0", "--name", "orphan", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    wait_training(cli, run_id)
    assert all(cli.node_pids(run_id).values())
    os.kill(cli.record(run_id)["supervisor_pid"], signal.SIGKILL)
    t0 = time.monotonic()
    assert wait_for(lambda: all_gone(cli, run_id), 30), cli.node_pids(run_id)
    print(f"supervisor SIGKILL: every rank gone after {time.monotonic() - t0:.1f}s")
    assert json.loads(cli("status", run_id, "--json").stdout)["status"] == "lost"
    assert cli("stop", run_id).returncode == 0


def test_stop_and_ctrl_c_leave_a_concurrent_run_alone(cli):
    keep = cli.launch("--max-restarts", "0", "--name", "keep", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    attached = subprocess.Popen(cli.argv("launch", "--cluster", str(cli.sim.spec_path), "--attach", "--max-restarts",
                                         "0", "--name", "ctrlc", SCRIPT, "--steps", "1000", "--sleep", "0.2"),
                                env=cli.env, cwd=cli.cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    first = attached.stdout.readline()
    ctrlc = run_id_from(first)
    stopped = cli.launch("--max-restarts", "0", "--name", "stopme", SCRIPT, "--steps", "1000", "--sleep", "0.2")
    for rid in (keep, ctrlc, stopped):
        wait_training(cli, rid)
    # Ctrl-C in the terminal: SIGINT to the foreground process group of the attached launch.
    os.killpg(attached.pid, signal.SIGINT)
    out, _ = attached.communicate(timeout=90)
    assert attached.returncode == 130, out[-3000:]
    res = cli("stop", stopped)
    assert res.returncode == 0 and "stopped" in res.stdout
    for rid in (ctrlc, stopped):
        assert cli.record(rid)["status"] == "stopped"
        assert all_gone(cli, rid), (rid, cli.node_pids(rid))
    # The concurrent run never noticed.
    assert cli.record(keep)["status"] == "running"
    assert all(cli.node_pids(keep).values())
    before = rank_lines(cli, keep, 0).count("step ")
    assert wait_for(lambda: rank_lines(cli, keep, 0).count("step ") > before + 3, 30)
    assert cli("stop", keep).returncode == 0
    assert all_gone(cli, keep)
