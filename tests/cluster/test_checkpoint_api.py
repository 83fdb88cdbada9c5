"""dscluster.checkpoint (the public API for a user's own script) through the real launcher and supervisor:
a rank that dies mid-run is restarted and the script resumes from its last committed step; a script
that saves but does not resume is named as such by `status`; `ckpt verify` checks a committed step.
Real DeepSpeed, real processes, gloo on CPU (local launcher: the same supervisor as a cluster run)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import test_launch_local
from polling import wait_for
from support import run_cli

from dscluster.runs.records import store

pytestmark = pytest.mark.slow


def dscluster(*args: str, env: dict, timeout: float = 120):
    """The CLI in a subprocess (tests/support.run_cli), with the two-minute limit these calls had."""
    return run_cli(*args, env=env, timeout=timeout)


env = test_launch_local.env  # the fixture: DSCLUSTER_HOME / DSCLUSTER_SHARED under the test's tmp_path
SCRIPT = Path(__file__).resolve().parents[1] / "data" / "ckpt_user_script.py"


def _launch(env, tmp_path, *script_args: str) -> Path:
    res = dscluster("launch", "--local", "2", "--detach", "--max-restarts", "1", "--name", "ckapi", str(SCRIPT),
                    *script_args, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    run_id = next(w for w in res.stdout.split() if w.startswith("ckapi-"))
    run_dir = store.run_path(tmp_path / "shared", run_id)
    rec = wait_for(lambda: store.read_record(run_dir).to_json()["status"] in store.FINISHED and store.read_record(run_dir).to_json(), 400)
    assert rec, f"run did not finish: {store.read_record(run_dir).to_json()}"
    return run_dir


def _rank_log(run_dir: Path, attempt_index: int, rank: int) -> str:
    logs = sorted((run_dir / "logs").glob(f"*_rank{rank}.log"))
    return logs[attempt_index].read_text(errors="replace")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_killed_rank_is_restarted_and_the_script_resumes_from_its_last_committed_step(env, tmp_path, mode):
    # async: save(mode="async") returns after the snapshot; the kill comes while training goes on.
    run_dir = _launch(env, tmp_path, "--steps", "6", "--save-every", "2", "--fail-at", "3", "--mode", mode)
    rec = store.read_record(run_dir).to_json()
    assert rec["status"] == "succeeded", rec
    assert [a.get("resume_step") for a in rec["attempts"]] == [None, 2]
    second = _rank_log(run_dir, 1, 0)
    assert "resumed from step-2" in second and "step 3 loss" in second and "step 1 loss" not in second
    # The same data and state: the resumed attempt's step-3 loss is the first attempt's, to the digit.
    first_loss = re.search(r"step 3 loss (\S+)", _rank_log(run_dir, 0, 0)).group(1)
    assert re.search(r"step 3 loss (\S+)", second).group(1) == first_loss
    status = dscluster("status", rec["id"], env=env)
    assert "resumed from step-2 (dscluster.checkpoint)" in status.stdout, status.stdout
    save_dir = run_dir / "checkpoints"
    assert (save_dir / "latest").read_text() == "step-6"
    assert sorted(p.name for p in save_dir.glob("step-*")) == ["step-4", "step-6"]  # keep=2, committed only
    commit = json.loads((save_dir / "step-6" / "COMMIT.json").read_text())
    assert commit["world_size"] == 2 and set(commit["sha256"]) == set(commit["files"])

    ok = dscluster("ckpt", "verify", rec["id"], env=env)
    assert ok.returncode == 0 and "step-6" in ok.stdout, ok.stdout + ok.stderr
    shard = next((save_dir / "step-6").glob("*optim_states.pt"))
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte, same size: only the content hash can tell
    shard.write_bytes(bytes(data))
    bad = dscluster("ckpt", "verify", rec["id"], "--step", "6", env=env)
    assert bad.returncode != 0 and shard.name in bad.stdout + bad.stderr and "Traceback" not in bad.stderr


def test_status_says_plainly_when_a_restarted_script_did_not_resume(env, tmp_path):
    run_dir = _launch(env, tmp_path, "--steps", "4", "--save-every", "2", "--fail-at", "3", "--no-resume")
    rec = store.read_record(run_dir).to_json()
    assert len(rec["attempts"]) == 2 and rec["attempts"][1]["resume_step"] == 2, rec
    second = _rank_log(run_dir, 1, 0)
    assert "step 1 loss" in second  # it started over...
    assert "step-2 is already committed; refusing to overwrite it" in second  # ...and its step-2 is not written
    assert (run_dir / "checkpoints" / "latest").read_text() == "step-2"
    status = dscluster("status", rec["id"], env=env)
    assert "did not resume from the committed step-2" in status.stdout, status.stdout
    assert "dscluster.checkpoint.load_latest" in status.stdout


def _launch_n(env, tmp_path, nprocs: int, *args: str) -> dict:
    res = dscluster("launch", "--local", str(nprocs), "--detach", "--max-restarts", "0", "--name", "ckapi", *args,
                    env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    run_dir = store.run_path(tmp_path / "shared", next(w for w in res.stdout.split() if w.startswith("ckapi-")))
    rec = wait_for(lambda: store.read_record(run_dir).to_json()["status"] in store.FINISHED and store.read_record(run_dir).to_json(), 400)
    assert rec and rec["status"] == "succeeded", rec
    return {"dir": run_dir, "log": _rank_log(run_dir, 0, 0)}


def test_a_step_saved_by_two_ranks_resumes_on_one_through_the_universal_format_with_the_same_loss(env, tmp_path):
    # Rank 0 draws the same batch for step 5 however many ranks there are, and its step-5 loss is taken
    # before step 5's update: so it is the same number in an uninterrupted 2-rank run and in a 1-rank run
    # resumed from the 2-rank step-4, exactly when the re-partitioned state is the saved one.
    whole = _launch_n(env, tmp_path, 2, str(SCRIPT), "--steps", "5", "--save-every", "100")
    saved = _launch_n(env, tmp_path, 2, str(SCRIPT), "--steps", "4", "--save-every", "4")
    ckpt_dir = saved["dir"] / "checkpoints"
    resumed = _launch_n(env, tmp_path, 1, "--env", f"DSCLUSTER_CHECKPOINT_DIR={ckpt_dir}", str(SCRIPT),
                        "--steps", "5", "--save-every", "100")
    assert "to DeepSpeed's universal checkpoint format for 1 ranks" in resumed["log"], resumed["log"][-2000:]
    assert "resumed from step-4" in resumed["log"] and "step 1 loss" not in resumed["log"]
    want = re.search(r"step 5 loss (\S+)", whole["log"]).group(1)
    assert re.search(r"step 5 loss (\S+)", resumed["log"]).group(1) == want
    assert (ckpt_dir / "step-4" / "universal" / "mp_rank_00_model_states.pt").is_file()
    assert json.loads((ckpt_dir / "step-5" / "COMMIT.json").read_text())["world_size"] == 1
