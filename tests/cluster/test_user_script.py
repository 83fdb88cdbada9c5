"""A user's own DeepSpeed script on the simulated 3-node cluster, started with the recipe's command line
(only `deepspeed` replaced by `dscluster launch`): runs, a deliberately hung rank is named with its stack,
a rank killed by SIGKILL is explained as such. Real sshd, pdsh, DeepSpeed's launcher, gloo, py-spy."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from polling import cli_runner, logs_tail, wait_for

from dscluster.runs.records import store

pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="us14")


@pytest.fixture(scope="module")
def work(sim):
    """The user's directory on shared storage: their script, the recipe's ds_config and a hostfile of IPs."""
    shared = Path(sim.spec.shared_dir)
    for name in ("min_ds_script.py", "hang_ds_script.py", "ckpt_user_script.py"):
        shutil.copy(DATA / name, shared / name)
    (shared / "ds_config.json").write_text(json.dumps({
        "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
        "optimizer": {"type": "SGD", "params": {"lr": 0.05}}, "zero_optimization": {"stage": 0}}))
    (shared / "hostfile").write_text("".join(f"{n.address} slots=1\n" for n in sim.spec.nodes))
    return shared


@pytest.fixture(scope="module")
def dsc(sim, work):
    return cli_runner(sim, work)


def _record(work: Path, run_id: str) -> dict:
    return store.read_record(store.run_path(work, run_id)).to_json()


FIRST_STEPS_S = 420  # a fresh node cache builds DeepSpeed's CPU collectives op first: minutes on a busy 2-core machine


@contextlib.contextmanager
def _stopped_at_the_end(work: Path, dsc, run_id: str):
    """The test's run is stopped when the test ends, pass or fail, unless it already finished."""
    try:
        yield
    finally:
        if _record(work, run_id).get("status") not in store.FINISHED:
            dsc("stop", run_id)


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
              "--deepspeed", "--deepspeed_config", "ds_config.json", "--steps", "3", "--log-loss")
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    assert "\n" not in run_id and " " not in run_id and run_id.startswith("min_ds_script-"), res.stdout
    assert "started on" in res.stderr
    record = _wait_end(work, run_id)
    assert record["status"] == "succeeded" and record["world_size"] == 3, record
    # No change to the script: DeepSpeed's own monitor, added to the run's ds_config, is charted.
    from dscluster.runs.records import metrics

    run_dir = store.run_path(work, run_id)
    lr = [r for r in metrics.read(run_dir)[0] if r.get("source") == "deepspeed"]
    # Steps copied twice mean the monitor's csv was written twice: say by whom (a second attempt, two engines).
    assert [r["step"] for r in lr] == [1, 2, 3] and lr[0]["lr"] == 0.05, (lr, record.get("attempts"),
                                                                          store.read_events(run_dir)[-12:])
    # The README's one line, `dscluster.log(step=..., loss=...)`, on rank 0 (the node user) beside the
    # supervisor's rows (root's) in the same file: the file is the node user's from its first moment.
    loss = [r for r in metrics.read(run_dir)[0] if "loss" in r and r.get("source") != "deepspeed"]
    assert [r["step"] for r in loss] == [1, 2, 3], loss
    assert (run_dir / "metrics.jsonl").stat().st_uid == record["launch"]["node_uid"]
    # ...through the one reader in every view: status, Run.metrics(), the run's TensorBoard.
    shown = next(line for line in dsc("status", run_id).stdout.splitlines() if "last metrics:" in line)
    assert "last metrics: step 3 " in shown and "lr 0.05" in shown and "loss" in shown, shown
    frame = subprocess.run([sys.executable, "-c", "import sys, dscluster; m = dscluster.Run(sys.argv[1], [sys.argv[2]]).metrics(); "
                            "print(m.dropna(subset=['lr'])[['step', 'lr']].values.tolist())", run_id, str(work / "runs")],
                           env=dsc.env, cwd=work, capture_output=True, text=True, timeout=120)
    assert frame.stdout.strip() == "[[1.0, 0.05], [2.0, 0.05], [3.0, 0.05]]", frame.stdout + frame.stderr
    if importlib.util.find_spec("tensorboard"):
        events = list((run_dir / "tensorboard" / "deepspeed").glob("events.out.tfevents.*"))
        node_uid = record["launch"]["node_uid"]
        assert len(events) == 1 and events[0].stat().st_uid == node_uid, events  # the node user's, like its dir
        assert (run_dir / "tensorboard").stat().st_uid == node_uid
    # --json: the run record's summary.
    res = dsc("launch", "--hostfile=hostfile", "--num_nodes", "2", "--json", "min_ds_script.py", "--steps", "1")
    view = json.loads(res.stdout)
    assert res.returncode == 0 and view["world_size"] == 2 and view["run_dir"].endswith(view["id"])
    _wait_end(work, view["id"])


def test_a_hung_rank_is_named_with_its_stack(work, dsc):
    # The ranks' progress record is off (DSCLUSTER_PROGRESS=0): this is the stall timeout's road, which every
    # hang the record cannot see takes (NCCL's async collectives, p2p); with it on, this hang is found in ~3 s
    # as a hung collective (tests/cluster/test_fault_detect_sim.py).
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "0", "--stall-timeout", "12",
              "--skip-doctor", "--env", "DSCLUSTER_PROGRESS=0", "hang_ds_script.py", "--hang-at", "3",
              "--hang-rank", "2")
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    with _stopped_at_the_end(work, dsc, run_id):
        _hung_rank_named(work, dsc, run_id)


def _hung_rank_named(work: Path, dsc, run_id: str) -> None:
    run_dir = store.run_path(work, run_id)
    # While it hangs: `dscluster stacks` groups the ranks and names the odd one out.
    assert wait_for(lambda: "step 2 " in "".join(p.read_text() for p in (run_dir / "logs").glob("*_rank0.log")),
                    FIRST_STEPS_S, 0.5), logs_tail(run_dir, 30)
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
    with _stopped_at_the_end(work, dsc, run_id):
        assert wait_for(lambda: "step 2 " in "".join(p.read_text() for p in (run_dir / "logs").glob("*_rank2.log")),
                        FIRST_STEPS_S, 0.5), logs_tail(run_dir, 30)
        _kill_rank_on(sim, "node2", run_id)
        record = _wait_end(work, run_id, 120)
    attempt = record["attempts"][-1]
    assert attempt["reason"] == "rank 2 on node2 killed by SIGKILL", attempt
    exp = record["explanation"]
    assert exp["signature"] == "rank-signal" and exp["params"]["sig"] == "SIGKILL", exp
    assert "dmesg" in exp["params"]["show"] and record["exit_code"] == 137


def _kill_rank_on(sim, node: str, run_id: str) -> None:
    """SIGKILL every rank of the run on `node`, as the kernel's OOM killer or an operator would."""
    kill = ("import os, signal; from dscluster.runs.views.stacks import rank_processes; "
            f"[os.kill(p, signal.SIGKILL) for p, r in rank_processes({run_id!r})]")
    sim.exec(node, [sys.executable, "-c", kill], timeout=30)


def test_a_killed_rank_resumes_from_the_scripts_last_committed_checkpoint(work, dsc):
    # The script commits through dscluster.checkpoint every 2 steps; rank 1 (node1) is SIGKILLed after step 3.
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "1", "--skip-doctor",
              "ckpt_user_script.py", "--steps", "6", "--save-every", "2", "--fail-at", "3")
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    record = _wait_end(work, run_id, 300)
    assert record["status"] == "succeeded", record
    first, second = record["attempts"]
    assert first["reason"] == "rank 1 on node1 killed by SIGKILL", first
    assert second["resume_step"] == 2
    logs = sorted((store.run_path(work, run_id) / "logs").glob("*_rank0.log"))
    resumed = logs[-1].read_text()
    assert "resumed from step-2" in resumed and "step 3 loss" in resumed and "step 1 loss" not in resumed
    assert "resumed from step-2 (dscluster.checkpoint)" in dsc("status", run_id).stdout


def test_status_says_a_restarted_script_without_checkpoints_started_from_scratch(sim, work, dsc):
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "1", "--skip-doctor",
              "min_ds_script.py", "--steps", "6", "--sleep", "1")
    run_id = res.stdout.strip()
    run_dir = store.run_path(work, run_id)
    assert wait_for(lambda: "step 1 " in "".join(p.read_text() for p in (run_dir / "logs").glob("*_rank2.log")),
                    180, 0.5)
    _kill_rank_on(sim, "node2", run_id)
    record = _wait_end(work, run_id, 300)
    assert record["status"] == "succeeded" and len(record["attempts"]) == 2, record
    status = dsc("status", run_id).stdout
    assert "started from scratch: no checkpoint was committed before this attempt" in status, status


def test_a_users_exception_is_its_own_line_and_a_deterministic_one_costs_one_attempt(work, dsc):
    # rank 0 (node0) raises a TypeError in the user's own code; the other ranks then see their peer go away.
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "2", "--skip-doctor",
              "min_ds_script.py", "--steps", "6", "--raise-at", "1", "--raise-rank", "0")
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    record = _wait_end(work, run_id, 300)
    assert record["status"] == "failed" and len(record["attempts"]) == 1, record  # not three
    exp = record["explanation"]
    err = exp["error"]
    assert exp["signature"] == "python-error" and exp["restart_can_help"] is False, exp
    assert err["type"] == "TypeError" and err["rank"] == 0 and err["node"] == "node0", err
    line = next(n for n, text in enumerate((DATA / "min_ds_script.py").read_text().splitlines(), 1)
                if 'torch.ones(2) + "1"' in text)
    assert err["where"].endswith(f"min_ds_script.py:{line}"), err  # the user's frame, not torch's
    assert exp["no_restart"] == {"why": "cannot-help"}
    assert record["attempts"][0]["reason"].startswith("rank 0 on node0: TypeError: unsupported operand")
    status = dsc("status", run_id).stdout
    assert "first error: rank 0 on node0: TypeError: unsupported operand" in status, status
    assert f"min_ds_script.py:{line}" in status and "not restarted: a restart cannot help" in status, status
    assert f"dscluster logs {run_id} --rank 0" in status and "RUN" not in status.split()
    events = store.read_events(store.run_path(work, run_id))
    assert any(e["event"] == "rank-error" and e.get("rank") == 0 and e.get("type") == "TypeError" for e in events)


def test_a_script_that_finished_and_aborted_at_exit_is_not_run_again(work, dsc):
    # Every step done, then rank 1 dies in std::terminate with no exception, as a process group's thread left
    # running when a script returns without destroy_process_group() makes it. The supervisor used to restart it,
    # running the finished script again; now it stops with the cause and its fix.
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "2", "--skip-doctor",
              "min_ds_script.py", "--steps", "2", "--abort-at-exit-rank", "1")
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    record = _wait_end(work, run_id, 300)
    assert record["status"] == "failed" and len(record["attempts"]) == 1, record
    exp = record["explanation"]
    assert exp["signature"] == "exit-abort" and exp["restart_can_help"] is False, exp
    assert exp["no_restart"] == {"why": "cannot-help"} and "destroy_process_group()" in exp["fix"], exp
    status = dsc("status", run_id).stdout
    assert "terminate called without an active exception" in status and "not restarted" in status, status


def test_the_same_failure_again_without_progress_is_not_restarted_a_third_time(work, dsc):
    # A timeout may pass, so it gets one restart; failing the same way at the same step again means the next
    # restart would too.
    res = dsc("launch", "--hostfile=hostfile", "--detach", "--max-restarts", "2", "--skip-doctor",
              "min_ds_script.py", "--steps", "6", "--raise-at", "0", "--raise-rank", "1", "--raise", "TimeoutError")
    run_id = res.stdout.strip()
    record = _wait_end(work, run_id, 400)
    # Each attempt's explanation is in its rank-error event: what a failure here must show.
    events = [e for e in store.read_events(store.run_path(work, run_id)) if e["event"] in ("rank-error", "no-restart")]
    assert record["status"] == "failed" and len(record["attempts"]) == 2, (record["attempts"], events)
    exp = record["explanation"]
    assert exp["error"]["rank"] == 1 and exp["error"]["node"] == "node1" and exp["restart_can_help"] is True, exp
    assert exp["no_restart"] == {"why": "same-failure", "previous": 1}
    assert "failed the same way as attempt 1" in dsc("status", run_id).stdout
