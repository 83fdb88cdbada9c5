"""`dscluster demo --nodes N` on the simulated cluster, supervised; and the local pre-flight that refuses
to start ranks that would hang on a stale torch JIT lock."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support import run_cli

SIM = "h10demo"  # the hidden --sim-name: a name of our own on a machine others test on (users get "default")


def hints(stdout: str) -> list[str]:
    """The 'Next:' commands, without their comments (`dscluster` as typed where the venv is on PATH)."""
    lines = stdout.split("Next:", 1)[1].splitlines()
    commands = [ln.split("  #", 1)[0].strip() for ln in lines if ln.strip()]
    return [" ".join([Path(c.split(" ", 1)[0]).name, *c.split(" ", 1)[1:]]) for c in commands]


@pytest.fixture
def home():
    path = Path(tempfile.mkdtemp(prefix="dsc-h10demo-", dir="/var/tmp"))
    os.chmod(path, 0o755)  # the node user traverses it to the simulated shared dir
    yield path
    run_cli("sim", "down", "--name", SIM, "--purge", env={**os.environ, "DSCLUSTER_HOME": str(path)}, timeout=120)
    subprocess.run(["rm", "-rf", str(path)], timeout=60, check=False)


@pytest.mark.root
@pytest.mark.cluster
@pytest.mark.slow
def test_demo_on_simulated_nodes_and_its_hints_address_that_cluster(home, tmp_path):
    env = {**os.environ, "DSCLUSTER_HOME": str(home), "CUDA_VISIBLE_DEVICES": ""}
    for key in ("DSCLUSTER_SHARED", "DSCLUSTER_CLUSTER"):
        env.pop(key, None)
    proc = run_cli("demo", "--nodes", "2", "--sim-name", SIM, "--cpu", "--steps", "6", "--save-interval", "3",
                   "--max-restarts", "0", env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "world size 2" in proc.stdout and "loss:" in proc.stdout
    runs = list((home / "sims" / SIM / "shared" / "runs").iterdir())
    assert len(runs) == 1
    run_id = runs[0].name
    record = json.loads((runs[0] / "run.json").read_text())
    assert record["status"] == "succeeded" and record["cluster"] == SIM and record["last_checkpoint_step"] == 6
    assert len(set(record["attempts"][0]["rank_nodes"])) == 2  # one rank on each node

    # The closing hints work as printed: they address this simulated cluster, not another one.
    steps = hints(proc.stdout)
    assert f"dscluster sim down --name {SIM}" in steps
    assert any(s.startswith(f"dscluster sim crash --name {SIM} node1 && ") and f"sim heal --name {SIM} node1" in s
               for s in steps), steps
    listed = run_cli(*shlex.split(next(s for s in steps if s.startswith("dscluster runs")))[1:], env=env, timeout=600)
    assert listed.returncode == 0 and run_id in listed.stdout, listed.stdout + listed.stderr
    logs = run_cli(*shlex.split(next(s for s in steps if s.startswith("dscluster logs")))[1:], env=env, timeout=600)
    assert logs.returncode == 0 and logs.stdout.strip(), logs.stdout + logs.stderr

    # The cluster is reused, never silently recreated at another size (that would kill its runs).
    again = run_cli("demo", "--nodes", "3", "--sim-name", SIM, "--cpu", "--dry-run", env=env, timeout=600)
    assert again.returncode == 2, again.stdout + again.stderr
    assert "running with 2 nodes, not 3" in again.stderr
    assert f"dscluster sim down --name {SIM} && dscluster demo --nodes 3" in again.stderr
    assert "--nodes 2" in again.stderr
    status = run_cli("sim", "status", "--name", SIM, env=env, timeout=60)
    assert status.returncode == 0 and "node1" in status.stdout and "node2" not in status.stdout, status.stdout


def _stale_lock(root: Path) -> Path:
    lock = root / f"py{sys.version_info.major}{sys.version_info.minor}_cpu" / "cpu_adam" / "lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    old = time.time() - 3600  # a compile killed an hour ago
    os.utime(lock, (old, old))
    return lock


def test_local_launch_and_demo_refuse_a_stale_jit_lock(tmp_path):
    ext, other = tmp_path / "ext", tmp_path / "empty"
    other.mkdir()
    lock = _stale_lock(ext)
    home = tmp_path / "home"
    env = {**os.environ, "DSCLUSTER_HOME": str(home), "CUDA_VISIBLE_DEVICES": "", "TORCH_EXTENSIONS_DIR": str(ext)}
    env.pop("DSCLUSTER_SHARED", None)
    launch = ["launch", "--local", "2", "--detach", "-m", "dscluster.train", "--steps", "1"]
    res = run_cli(*launch, env=env, timeout=120)
    assert res.returncode == 4, res.stdout + res.stderr
    assert str(lock) in res.stderr and f"rm -f {lock}" in res.stderr and "Traceback" not in res.stderr
    # The ranks' TORCH_EXTENSIONS_DIR is the one checked: --env wins over this shell's.
    res = run_cli(*launch[:4], "--env", f"TORCH_EXTENSIONS_DIR={ext}", *launch[4:],
                  env={**env, "TORCH_EXTENSIONS_DIR": str(other)}, timeout=120)
    assert res.returncode == 4 and f"rm -f {lock}" in res.stderr, res.stdout + res.stderr
    res = run_cli("demo", "--cpu", "--steps", "1", "--detach", env=env, timeout=300)
    assert res.returncode == 4 and f"rm -f {lock}" in res.stderr, res.stdout + res.stderr
    runs = [p for p in home.rglob("run.json")]
    assert not runs, runs  # refused before any run directory or process exists
    # The printed fix is the whole fix: afterwards the same launch gets past the pre-flight.
    subprocess.run(shlex.split(f"rm -f {lock}"), check=True)
    res = run_cli(*launch[:4], "--dry-run", *launch[4:], env=env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_hints_for_the_default_simulated_cluster_need_no_flags():
    from dscluster.commands.demo import Target, closing_hints

    three = [h.split("  #")[0] for h in closing_hints(Target("spec", Path("/s"), "default", 3), "demo-1")]
    assert three[:2] == ["dscluster runs", "dscluster logs demo-1"] and three[-1] == "dscluster sim down"
    assert any(h.startswith("dscluster sim crash node1 && ") for h in three)
    assert "--nodes 3" in three[2] and not any("sim up" in h for h in three)
    one = closing_hints(Target("spec", Path("/s"), "default", 1), "demo-1")
    assert not any("crash" in h for h in one)  # a 1-node cluster has no node1
