"""Simulated-cluster lifecycle: two named clusters coexist, `down` leaves nothing, `up` recovers from a
cluster left behind by a killed process, bad arguments and non-root are refused clearly."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from polling import wait_for
from support import CLI, run_cli

from dscluster.errors import ConfigError, ExitCode
from dscluster.sim import SimCluster, down, leftovers
from dscluster.sim.nodeuser import SIM_USER, ensure_access, ensure_user
from dscluster.sim.procs import alive

pytestmark = [pytest.mark.root, pytest.mark.cluster]


def nothing_left(name: str) -> bool:
    return not any(leftovers(name).values())


def cli(*args, home: Path, timeout=120, user=None):
    """support.run_cli with `home` as DSCLUSTER_HOME, in English."""
    return run_cli(*args, env={**os.environ, "DSCLUSTER_HOME": str(home), "DSCLUSTER_LANG": "en"}, timeout=timeout,
                   user=user)


@pytest.fixture
def home():
    path = Path(tempfile.mkdtemp(prefix="dsc-life-", dir="/var/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_two_named_clusters_coexist_and_down_leaves_nothing(sim_cluster, home):
    a = sim_cluster(2, name="h2a")
    b = sim_cluster(2, name="h2b", subnet="10.231.7.0/24", master_identity=True)
    assert b.subnet == "10.231.7.0/24" and a.subnet != b.subnet
    a.check_ssh()
    b.check_ssh()
    assert a.exec("node0", ["hostname"]).stdout.strip() == b.exec("node0", ["hostname"]).stdout.strip() == "node0"
    # separate bridges, no routing: a's nodes cannot reach b's
    probe = [sys.executable, "-c", f"import socket; socket.create_connection(('{b.spec.nodes[0].address}', 2222), 2)"]
    assert a.exec("node0", probe).returncode != 0
    assert b.exec("node1", probe).returncode == 0
    # the same subnet twice is refused, naming the clash
    with pytest.raises(ConfigError, match="overlaps"):
        SimCluster.up("h2c", 1, subnet="10.231.7.0/24", home=home)
    assert nothing_left("h2c")
    # down one: nothing of it remains, the other is untouched
    pids = [n["pid1"] for n in a.state["nodes"]]
    proc = cli("sim", "down", "--name", "h2a", home=home)
    assert proc.returncode == 0 and "removed" in proc.stdout, proc.stderr
    assert nothing_left("h2a"), leftovers("h2a")
    assert not any(alive(p) for p in pids)
    assert not Path(a.spec.path).exists() and not a.spec.state_dir.exists()
    assert not Path("/etc/netns/dsc-h2a-node0").exists()
    b.check_ssh()
    assert cli("sim", "down", "--name", "h2a", home=home).returncode == 0  # repeating is harmless


def test_master_node_user_launches_across_the_cluster(sim_cluster):
    """With the key installed by the master's agent (--identity), the node user on node0 reaches every
    node through the published spec, as JupyterLab on the master does."""
    sim = sim_cluster(2, name="h2m", master_identity=True)
    key = Path(sim.state["user_identity_dir"]) / "id_ed25519"
    assert key.stat().st_uid == 2222 and oct(key.stat().st_mode & 0o777) == "0o600"
    assert oct(key.parent.stat().st_mode & 0o777) == "0o700"
    published = sim.spec.shared_dir / ".dscluster" / "dscluster.toml"
    assert "state_dir" not in published.read_text() and "PRIVATE" not in published.read_text()
    code = ("from dscluster.cluster.spec import resolve_spec; from dscluster.cluster.ssh import runners; "
            "print(' '.join(r.run(['hostname']).check().stdout.strip() for r in runners(resolve_spec(None))))")
    out = sim.exec("node0", [sys.executable, "-c", code], user=SIM_USER, cwd="/",
                   env={"DSCLUSTER_CLUSTER": str(published)}, timeout=60)
    assert out.ok and out.stdout.split() == ["node0", "node1"], out.stderr
    sim.down()
    assert not key.parent.exists()  # down removes the key copy from the user's home


def test_up_recovers_from_a_killed_up(home):
    name = "h2kill"
    env = {**os.environ, "DSCLUSTER_HOME": str(home)}
    proc = subprocess.Popen([*CLI, "sim", "up", "3", "--name", name], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30
    while not leftovers(name)["netns"] and time.monotonic() < deadline:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert leftovers(name)["netns"], "the killed up should have left namespaces behind"
    try:
        sim = SimCluster.up(name, 2, home=home)
        assert sim.nodes == ["node0", "node1"] and len(leftovers(name)["netns"]) == 2
        assert sim.exec("node1", ["hostname"]).stdout.strip() == "node1"
        sim.check_ssh()
    finally:
        down(name, purge=True)
    assert nothing_left(name), leftovers(name)


@pytest.mark.parametrize("args,code,words", [
    (["sim", "up", "2", "--name", "Bad_Name"], ExitCode.USAGE, ["not a valid simulated-cluster name"]),
    (["sim", "up", "0", "--name", "h2bad"], ExitCode.USAGE, ["out of range"]),
    (["sim", "up", "2", "--name", "h2bad", "--subnet", "10.1.2.0/29"], ExitCode.USAGE, ["too small"]),
    (["sim", "up", "2", "--name", "h2bad", "--subnet", "8.8.8.0/24"], ExitCode.USAGE, ["not a private range"]),
    (["sim", "up", "2", "--name", "h2bad", "--subnet", "nope"], ExitCode.USAGE, ["not an IPv4 network"]),
    (["sim", "status", "--name", "h2none"], ExitCode.CLUSTER, ["no simulated cluster named 'h2none'"]),
    (["sim", "crash", "--name", "h2none", "node0"], ExitCode.CLUSTER, ["sim up"]),
])
def test_bad_arguments_are_refused_clearly(home, args, code, words):
    proc = cli(*args, home=home)
    assert proc.returncode == code, proc.stderr
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)
    assert "fix:" in proc.stderr and "Traceback" not in proc.stderr
    assert nothing_left("h2bad")


def test_down_of_a_cluster_that_is_not_up_says_so(home):
    # A typo'd --name must not read as "removed": nothing existed, and the user is told so (exit 0: idempotent).
    proc = cli("sim", "down", "--name", "h2never", home=home)
    assert proc.returncode == 0, proc.stderr
    assert "no simulated cluster named 'h2never' was up: nothing to remove" in proc.stdout
    assert "removed (" not in proc.stdout and "Next:" in proc.stdout


def test_purge_never_deletes_a_shared_dir_the_user_gave(home):
    # `sim up --shared DIR` may point at a project; `down --purge` removes only what the sim created.
    mine = home / "my-project"
    mine.mkdir()
    (mine / "train.py").write_text("print('mine')\n")
    SimCluster.up("h8keep", 1, shared_dir=mine, home=home)
    down("h8keep", purge=True)
    assert nothing_left("h8keep"), leftovers("h8keep")
    assert (mine / "train.py").read_text() == "print('mine')\n"
    assert not (home / "sims" / "h8keep").exists()


def test_purge_after_a_plain_down_removes_what_down_kept(home):
    # The README: `sim down` keeps the runs "until `sim down --purge`", which must work after the plain
    # down too (its state is gone by then, the runs are where `sim up` put them).
    up = cli("sim", "up", "1", "--name", "h28purge", home=home)
    assert up.returncode == 0, up.stderr
    runs = home / "sims" / "h28purge" / "shared" / "runs"
    (runs / "r1").mkdir(parents=True)
    plain = cli("sim", "down", "--name", "h28purge", home=home)
    assert plain.returncode == 0 and (runs / "r1").is_dir(), plain.stderr
    purge = cli("sim", "down", "--purge", "--name", "h28purge", home=home)
    assert purge.returncode == 0 and "removed" in purge.stdout, purge.stdout + purge.stderr
    assert not (home / "sims" / "h28purge").exists() and nothing_left("h28purge")


def test_down_stops_the_clusters_runs_first_so_none_outlives_it_onto_the_next_cluster(home):
    # A run left waiting for nodes that `sim down` removed would restart on the next `sim up` at the same
    # addresses (seen in the README blocks: a run restarted a second before `sim down`).
    from dscluster.runs.records import store

    up = cli("sim", "up", "2", "--name", "h38run", home=home, timeout=300)
    assert up.returncode == 0, up.stdout + up.stderr
    spec = home / "sims" / "h38run" / "dscluster.toml"
    shared = home / "sims" / "h38run" / "shared"
    env = {**os.environ, "DSCLUSTER_HOME": str(home), "DSCLUSTER_LANG": "en"}
    try:
        res = run_cli("launch", "--cluster", str(spec), "--skip-doctor", "--detach", "--name", "outlive",
                      "-m", "dscluster.train", "--steps", "100000", "--step-sleep", "0.3", env=env, cwd=shared,
                      timeout=300)
        assert res.returncode == 0, res.stdout + res.stderr
        run_id = next(w for w in res.stdout.split() if w.startswith("outlive-"))
        run_dir = store.run_path(shared, run_id)
        assert wait_for(lambda: store.read_record(run_dir).status == "running", 300), store.read_record(run_dir)
        supervisor = store.read_record(run_dir).supervisor_pid
        down_ = cli("sim", "down", "--name", "h38run", home=home, timeout=300)
        assert down_.returncode == 0, down_.stdout + down_.stderr
        assert f"stopping run {run_id} first" in down_.stdout, down_.stdout
        rec = store.read_record(run_dir)
        assert rec.status == "stopped", rec
        assert wait_for(lambda: not alive(supervisor), 60), f"supervisor {supervisor} still running after sim down"
        assert nothing_left("h38run"), leftovers("h38run")
    finally:
        down("h38run", purge=True)


def test_non_root_is_told_it_needs_root(home):
    ensure_access(ensure_user(SIM_USER), home)  # so the non-root user can run this Python at all
    proc = cli("sim", "up", "1", "--name", "h2user", home=home, user=SIM_USER)
    assert proc.returncode == ExitCode.PERMISSION, proc.stderr
    assert "needs root" in proc.stderr and "sudo dscluster sim up" in proc.stderr
    assert nothing_left("h2user")


def test_names_whose_interfaces_would_collide_are_refused(sim_cluster, home):
    # "c963" and "c4248" share the 6-hex hash that names their bridge and veths.
    from dscluster.sim.names import SimNames

    assert SimNames("c963").bridge == SimNames("c4248").bridge
    first = sim_cluster(1, name="c963")
    proc = cli("sim", "up", "1", "--name", "c4248", home=home)
    assert proc.returncode == ExitCode.USAGE and "running cluster 'c963'" in proc.stderr, proc.stderr
    first.check_ssh()  # untouched


def test_real_cluster_flow_init_then_node_agents(sim_cluster, tmp_path, monkeypatch):
    """The bare-metal path on simulated machines: `dscluster init` (new identity, public key to the
    shared dir) -> node agents (re)start and install it -> pinned keys and ssh from init's config."""
    from dscluster.cluster.spec import load_spec
    from dscluster.cluster.ssh import SSHRunner, read_known_hosts

    sim = sim_cluster(2, name="h2init")
    ips = [n.address for n in sim.spec.nodes]
    workdir = tmp_path / "controller"
    workdir.mkdir()
    env = {**os.environ, "DSCLUSTER_HOME": str(tmp_path / "ctl-home"), "DSCLUSTER_LANG": "en"}
    init = run_cli("init", "--name", "real", "--node", f"{ips[0]}:2", "--node", ips[1], "--shared",
                   str(sim.spec.shared_dir), "--user", SIM_USER, cwd=workdir, env=env, timeout=60)
    assert init.returncode == 0, init.stderr
    spec = load_spec(workdir / "dscluster.toml")
    assert spec.world_size == 3 and spec.state_dir is None
    new_pub = (tmp_path / "ctl-home" / "clusters" / "real" / "id_ed25519.pub").read_text()
    assert (sim.spec.shared_dir / ".dscluster" / "cluster.pub").read_text() == new_pub
    for node in sim.nodes:  # the agents pick up the new cluster key when they (re)start
        sim.crash(node)
        sim.heal(node)
    monkeypatch.setenv("DSCLUSTER_HOME", str(tmp_path / "ctl-home"))  # where init put the identity
    # The keys the agents published lie where the node user can write: never pinned from there (issue 27);
    # the admin pins them from the nodes themselves after comparing fingerprints with the agents' logs.
    trust = run_cli("config", "trust", "--all", "--scan", "--yes", cwd=workdir, env=env, timeout=120)
    assert trust.returncode == 0, trust.stdout + trust.stderr
    results = [SSHRunner(spec, n).run(["hostname"], timeout=30) for n in spec.nodes]
    assert [r.stdout.strip() for r in results] == ["node0", "node1"], [r.stderr for r in results]
    assert sorted(read_known_hosts(spec)) == sorted(ips)  # pinned under the addresses init used
    with pytest.raises(Exception, match="Permission denied|rejects"):  # the sim's old key is no longer trusted
        sim.check_ssh()
