"""A user's own DeepSpeed script on the simulated 3-node cluster, started with the recipe's command line
(only `deepspeed` replaced by `dscluster launch`): runs, a deliberately hung rank is named with its stack,
a rank killed by SIGKILL is explained as such. Real sshd, pdsh, DeepSpeed's launcher, gloo, py-spy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from polling import wait_for

from dscluster.runs import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="us14")


@pytest.fixture(scope="module")
def work(sim):
    """The user's directory on shared storage: their script, the recipe's ds_config and a hostfile of IPs."""
    shared = Path(sim.spec.shared_dir)
    for name in ("min_ds_script.py", "hang_ds_script.py"):
        shutil.copy(DATA / name, shared / name)
    (shared / "ds_config.json").write_text(json.dumps({
        "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
        "optimizer": {"type": "SGD", "params": {"lr": 0.05}}, "zero_optimization": {"stage": 0}}))
    (shared / "hostfile").write_text("".join(f"{n.address} slots=1\n" for n in sim.spec.nodes))
    return shared


@pytest.fixture(scope="module")
def dsc(sim, work):
    env = {**os.environ, "DSCLUSTER_HOME": str(Path(sim.spec_path).parents[2])}
    env.pop("DSCLUSTER_CLUSTER", None)
    env.pop("DSCLUSTER_SHARED", None)

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dscluster.cli", *args], env=env, cwd=work, capture_output=True,
                              text=True, timeout=timeout)
    return run


def _record(work: Path, run_id: str) -> dict:
    return store.read_record(store.run_path(work, run_id))


def _wait_end(work: Path, run_id: str, timeout: float = 240) -> dict:
    assert wait_for(lambda: _record(work, run_id).get("status") in store.FINISHED, timeout, 0.5), \
        _record(work, run_id)
    return _record(work, run_id)


def test_the_recipes_command_runs_a_users_script(sim, work, dsc):
    first = sim.spec.nodes[0].address
    # Refused before anything starts, naming the flag: the master is not the first host.
    res = dsc("launch", "--hostfile=hostfile", f"--master_addr={sim.spec.nodes[1].address}", "--detach",
              "min_ds_script.py", "--deepspeed", "--deepspeed_config", "ds_config.json")
    assert res.returncode == 2 and "--master_addr" in res.stderr and "host 2 of the hostfile" in res.stderr
    res = dsc("launch", "--hostfile", "hostfile", "--include", "node7", "--detach", "min_ds_script.py")
    assert res.returncode == 2 and "node7 not in the hostfile" in res.stderr
    assert not (work / "runs").exists() or not list((work / "runs").iterdir())
    # The recipe's command, with `deepspeed` replaced: the run id alone on stdout (not a terminal).
    res = dsc("launch", "--hostfile=hostfile", f"--master_addr={first}", "--detach", "min_ds_script.py",
              "--deepspeed", "--deepspeed_config", "ds_config.json", "--steps", "3")
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    assert "\n" not in run_id and " " not in run_id and run_id.startswith("min_ds_script-"), res.stdout
    assert "started on" in res.stderr
    record = _wait_end(work, run_id)
    assert record["status"] == "succeeded" and record["world_size"] == 3, record
    # No change to the script: DeepSpeed's own monitor, added to the run's ds_config, is charted.
    from dscluster.runs import metrics

    lr = [r for r in metrics.read(store.run_path(work, run_id))[0] if r.get("source") == "deepspeed"]
    assert [r["step"] for r in lr] == [1, 2, 3] and lr[0]["lr"] == 0.05, lr
    # --json: the run record's summary.
    res = dsc("launch", "--hostfile=hostfile", "--num_nodes", "2", "--json", "min_ds_script.py", "--steps", "1")
    view = json.loads(res.stdout)
    assert res.returncode == 0 and view["world_size"] == 2 and view["run_dir"].endswith(view["id"])
    _wait_end(work, view["id"])


def test_a_hung_rank_is_named_with_its_stack(work, dsc):
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "0", "--stall-timeout", "12",
              "--skip-doctor", "hang_ds_script.py", "--hang-at", "3", "--hang-rank", "2")
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    run_dir = store.run_path(work, run_id)
    # While it hangs: `dscluster stacks` groups the ranks and names the odd one out.
    assert wait_for(lambda: "step 2 " in "".join(p.read_text() for p in (run_dir / "logs").glob("*_rank0.log")),
                    180, 0.5)
    assert wait_for(lambda: "ranks 0-1" in dsc("stacks", run_id).stdout, 30, 1.0)
    res = dsc("stacks", run_id)
    assert "rank 2 on node2 in load_batch at hang_ds_script.py:" in res.stdout, res.stdout + res.stderr
    assert "time.sleep(3600)" in res.stdout and "all_reduce" in res.stdout
    # The stall detector fires: the supervisor takes them before the teardown and the explanation quotes them.
    record = _wait_end(work, run_id, 120)
    exp = record["explanation"]
    assert exp["signature"] == "stalled-rank" and "rank 2 on node2 in load_batch" in exp["params"]["odd"], exp
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    taken = next(e for e in events if e["event"] == "stacks")
    stalled = next(e for e in events if e["event"] == "stalled")
    assert taken["t"] <= stalled["t"] and taken["seconds"] < 15, taken
    saved = Path(taken["file"])
    assert saved.is_file() and "odd one out: rank 2 on node2" in saved.read_text()
    print(f"stall detected -> stacks of 3 nodes saved: {taken['seconds']:.2f}s")
    assert "odd one out" in dsc("status", run_id).stdout or "rank 2 on node2" in dsc("status", run_id).stdout


def test_a_rank_killed_by_sigkill_is_explained_as_such(sim, work, dsc):
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "0", "--skip-doctor",
              "hang_ds_script.py", "--hang-at", "-1")
    run_id = res.stdout.strip()
    run_dir = store.run_path(work, run_id)
    assert wait_for(lambda: "step 2 " in "".join(p.read_text() for p in (run_dir / "logs").glob("*_rank2.log")),
                    180, 0.5)
    kill = ("import os, signal; from dscluster.runs.stacks import rank_processes; "
            f"[os.kill(p, signal.SIGKILL) for p, r in rank_processes({run_id!r})]")
    sim.exec("node2", [sys.executable, "-c", kill], timeout=30)
    record = _wait_end(work, run_id, 120)
    attempt = record["attempts"][-1]
    assert attempt["reason"] == "rank 2 on node2 killed by SIGKILL", attempt
    exp = record["explanation"]
    assert exp["signature"] == "rank-signal" and exp["params"]["sig"] == "SIGKILL", exp
    assert "dmesg" in exp["params"]["show"] and record["exit_code"] == 137
