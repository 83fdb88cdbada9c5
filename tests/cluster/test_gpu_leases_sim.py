"""GPU leases, the queue and run owners on a simulated 2-node cluster (root: network namespaces, sshd, pdsh).

Two runs on the same nodes: the second is refused naming the holder, queued with --wait (`dscluster queue`
shows it) and runs once the first ends; a supervisor killed with SIGKILL leaves a lease the next launch
reclaims; another OS user cannot stop a run it does not own (CLI and Python API). Every run a test starts is
stopped at teardown, pass or fail. Runs are a tiny script that waits for a file (no torch): the test ends them
by creating it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from polling import wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]

SCRIPT = (Path(__file__).resolve().parents[1] / "data" / "wait_for_file.py").read_text()


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(2, name="h33lease")


class Cli:
    def __init__(self, sim, home: Path):
        self.sim, self.shared = sim, Path(sim.spec.shared_dir)
        self.env = {**os.environ, "DSCLUSTER_HOME": str(home), "DSCLUSTER_LANG": "en"}
        self.env.pop("DSCLUSTER_SHARED", None)
        self.env.pop("DSCLUSTER_CLUSTER", None)
        self.started: list[str] = []
        self.script = self.shared / "h33_wait.py"
        self.script.write_text(SCRIPT)
        self.script.chmod(0o644)

    def __call__(self, *args: str, user: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "dscluster.cli", *args]
        if user:
            argv = ["runuser", "-u", user, "--", *argv]
        return subprocess.run(argv, env=self.env, cwd=str(self.shared), capture_output=True, text=True,
                              timeout=timeout)

    def launch(self, name: str, *extra: str) -> subprocess.CompletedProcess:
        release = self.shared / f"h33-{name}.release"
        res = self("launch", "--cluster", str(self.sim.spec_path), "--detach", "--skip-doctor", "--max-restarts",
                   "0", "--name", name, *extra, str(self.script), str(release))
        if res.returncode == 0:
            self.started.append(res.stdout.strip().splitlines()[-1])
        return res

    def release(self, name: str) -> None:
        (self.shared / f"h33-{name}.release").write_text("")

    def record(self, run_id: str):
        return store.read_record(store.run_path(self.shared, run_id))

    def events(self, run_id: str) -> list[str]:
        return [e["event"] for e in store.read_events(store.run_path(self.shared, run_id))]


@pytest.fixture
def cli(sim, tmp_path_factory):
    home = tmp_path_factory.mktemp("h33home")
    c = Cli(sim, home)
    yield c
    for run_id in c.started:  # pass or fail: nothing of a test's runs outlives it
        c("stop", "--cluster", str(sim.spec_path), run_id, "--timeout", "20")


def status(cli: Cli, run_id: str) -> str:
    return cli.record(run_id).status


def test_second_run_is_refused_then_queued_and_runs_after_the_first(cli):
    first = cli.launch("first")
    assert first.returncode == 0, first.stdout + first.stderr
    a = cli.started[-1]
    assert wait_for(lambda: status(cli, a) == "running", 120), cli.record(a)
    assert cli.record(a).owner == "root"

    refused = cli.launch("second")
    assert refused.returncode == 8, refused.stdout + refused.stderr
    assert a in refused.stderr and "root" in refused.stderr and "node0:0" in refused.stderr
    assert "--wait" in refused.stderr
    assert not list((cli.shared / "runs").glob("second-*"))  # nothing started

    queued = cli.launch("second", "--wait")
    assert queued.returncode == 0, queued.stdout + queued.stderr
    b = cli.started[-1]
    assert "queued" in queued.stderr
    assert status(cli, b) == "queued"
    shown = cli("queue", "--cluster", str(cli.sim.spec_path))
    assert shown.returncode == 0 and b in shown.stdout and a in shown.stdout, shown.stdout
    board = json.loads(cli("queue", "--cluster", str(cli.sim.spec_path), "--json").stdout)
    assert [c["run_id"] for c in board["held"]] == [a]
    assert [(w["position"], w["run_id"], w["behind"]) for w in board["queue"]] == [(1, b, [a])]
    assert wait_for(lambda: "queued" in cli.events(b), 30)
    assert status(cli, b) == "queued"  # still waiting: the first run holds node0 and node1
    runs = cli("runs", "--cluster", str(cli.sim.spec_path)).stdout
    assert "root" in runs
    shown = cli("status", "--cluster", str(cli.sim.spec_path), b).stdout
    assert "number 1 in the queue" in shown and a in shown and "owner: root" in shown, shown

    cli.release("first")  # the first run ends: its leases go, the queued run takes the GPUs
    assert wait_for(lambda: status(cli, a) == "succeeded", 60), (status(cli, a), cli("logs", "--cluster", str(
        cli.sim.spec_path), a).stdout[-3000:])
    assert wait_for(lambda: "launched" in cli.events(b), 90), cli.record(b)
    events = cli.events(b)
    assert events.index("queued") < events.index("gpus-held") < events.index("launched")
    board = json.loads(cli("queue", "--cluster", str(cli.sim.spec_path), "--json").stdout)
    assert [c["run_id"] for c in board["held"]] == [b] and board["queue"] == []
    cli.release("second")
    assert wait_for(lambda: status(cli, b) == "succeeded", 60), cli.record(b)
    assert json.loads(cli("queue", "--cluster", str(cli.sim.spec_path), "--json").stdout)["held"] == []


def test_a_queued_run_can_be_stopped(cli):
    assert cli.launch("holder").returncode == 0
    a = cli.started[-1]
    res = cli.launch("waiter", "--wait")
    assert res.returncode == 0, res.stderr
    b = cli.started[-1]
    assert status(cli, b) == "queued"
    stopped = cli("stop", "--cluster", str(cli.sim.spec_path), b, "--timeout", "30")
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert status(cli, b) == "stopped" and "launched" not in cli.events(b)
    board = json.loads(cli("queue", "--cluster", str(cli.sim.spec_path), "--json").stdout)
    assert board["queue"] == [] and [c["run_id"] for c in board["held"]] == [a]
    cli.release("holder")
    assert wait_for(lambda: status(cli, a) == "succeeded", 90), cli.record(a)


def test_a_killed_supervisors_lease_is_reclaimed(cli):
    assert cli.launch("killed").returncode == 0
    a = cli.started[-1]
    assert wait_for(lambda: status(cli, a) == "running", 120), cli.record(a)
    os.kill(int(cli.record(a).supervisor_pid), signal.SIGKILL)
    # its claim stays on the shared storage, but its supervisor is gone: the next launch takes the GPUs
    assert wait_for(lambda: cli("status", "--cluster", str(cli.sim.spec_path), a).stdout.count("lost"), 30)
    res = cli.launch("after")
    assert res.returncode == 0, res.stdout + res.stderr
    b = cli.started[-1]
    assert wait_for(lambda: status(cli, b) == "running", 120), cli.record(b)
    cli.release("after")
    assert wait_for(lambda: status(cli, b) == "succeeded", 60), cli.record(b)


@pytest.fixture
def other_user(sim):
    """A second OS user, not root and not the runs' owner: the cluster's node user (a throwaway account could
    not run this checkout's interpreter, which lives under root's home here)."""
    return sim.spec.ssh_user


def test_another_user_cannot_stop_a_run_it_does_not_own(cli, other_user):
    assert cli.launch("owned").returncode == 0
    a = cli.started[-1]
    run_dir = store.run_path(cli.shared, a)
    assert wait_for(lambda: status(cli, a) == "running", 120), cli.record(a)
    home = Path(tempfile.mkdtemp(prefix="dsc-h33-", dir="/var/tmp"))  # pytest's tmp dirs are root's (0700)
    shutil.chown(home, other_user)
    cli.env["DSCLUSTER_HOME"], saved = str(home), cli.env["DSCLUSTER_HOME"]
    try:
        res = cli("stop", str(run_dir), user=other_user)
        assert res.returncode == 7, res.stdout + res.stderr
        assert f"run {a} belongs to root" in res.stderr and other_user in res.stderr and "Traceback" not in res.stderr
        api = subprocess.run(["runuser", "-u", other_user, "--", sys.executable, "-c",
                              "import sys, dscluster\n"
                              "from dscluster.errors import NotOwner\n"
                              f"run = dscluster.Run({a!r}, [{str(run_dir.parent)!r}])\n"
                              "print('owner', run.owner)\n"
                              "try:\n    run.stop()\nexcept NotOwner as e:\n    print('refused', e.message); sys.exit(7)\n"],
                             env=cli.env, cwd="/", capture_output=True, text=True, timeout=120)
        assert api.returncode == 7, api.stdout + api.stderr
        assert "owner root" in api.stdout and "refused" in api.stdout
    finally:
        cli.env["DSCLUSTER_HOME"] = saved
        shutil.rmtree(home, ignore_errors=True)
    assert status(cli, a) == "running" and not (run_dir / "stop").exists()
    cli.release("owned")
    assert wait_for(lambda: status(cli, a) == "succeeded", 60), cli.record(a)
