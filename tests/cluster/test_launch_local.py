"""Supervised launch on this machine (no ssh): the same supervisor, watchdog and run directory as a
cluster run, with DeepSpeed's local launcher. Real DeepSpeed, real processes, gloo on CPU.
(A local run to completion is covered by the demo's integration test, which goes through the supervisor.)"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from polling import wait_for
from support import run_cli

from dscluster.runs.records import store
from dscluster.runs.supervising.reaper import run_pids

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py"


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ)
    e.update(DSCLUSTER_HOME=str(tmp_path / "home"), DSCLUSTER_SHARED=str(tmp_path / "shared"))
    return e


def _run_id(out: str) -> str:
    for word in out.split():
        if word.startswith("min_ds_script-") or word.startswith("loop-"):
            return word
    raise AssertionError(out)


def test_supervisor_sigkill_takes_the_ranks_with_it(env, tmp_path):
    res = run_cli("launch", "--local", "2", "--detach", "--name", "loop", str(SCRIPT), "--steps", "500",
                  "--sleep", "0.2", env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    run_dir = store.run_path(tmp_path / "shared", _run_id(res.stdout))
    rank_log = lambda: list((run_dir / "logs").glob("*_rank1.log"))  # noqa: E731
    assert wait_for(lambda: rank_log() and "step 1 " in rank_log()[0].read_text(), 120), "ranks never trained"
    rec = store.read_record(run_dir).to_json()
    assert len(run_pids(rec["id"])) >= 3  # launcher + 2 ranks (+ the runner)
    os.kill(rec["supervisor_pid"], signal.SIGKILL)
    t0 = time.monotonic()
    assert wait_for(lambda: not run_pids(rec["id"]), 20), f"left behind: {run_pids(rec['id'])}"
    print(f"ranks gone {time.monotonic() - t0:.1f}s after the supervisor's SIGKILL")
    status = run_cli("status", rec["id"], "--json", env=env, timeout=120)
    assert '"status": "lost"' in status.stdout
    stop = run_cli("stop", rec["id"], env=env, timeout=120)
    assert stop.returncode == 0 and "stopped" in stop.stdout
    assert store.read_record(run_dir).to_json()["status"] == "stopped"
    again = run_cli("stop", rec["id"], env=env, timeout=120)
    assert "already finished" in again.stdout
    unknown = run_cli("stop", "no-such-run", env=env, timeout=120)
    assert unknown.returncode == 5 and "unknown run" in unknown.stderr


def test_a_silent_hang_is_caught_by_the_stall_timeout(env, tmp_path):
    # After its first step the script sleeps for minutes without a word: a hung job, as far as anyone can tell.
    res = run_cli("launch", "--local", "1", "--detach", "--max-restarts", "0", "--stall-timeout", "6",
                  "--name", "loop", str(SCRIPT), "--steps", "5", "--sleep", "300", env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    run_dir = store.run_path(tmp_path / "shared", _run_id(res.stdout))
    rec = wait_for(lambda: store.read_record(run_dir).to_json()["status"] in store.FINISHED and store.read_record(run_dir).to_json(), 180)
    assert rec and rec["status"] == "failed" and rec["exit_code"] != 0
    assert rec["explanation"]["signature"] == "stalled"
    assert "no progress" in rec["attempts"][0]["reason"]
    assert not run_pids(rec["id"])


def test_a_trainer_input_error_is_explained_in_its_own_words_and_not_restarted(env, tmp_path):
    # Default restarts: a missing data directory fails the same way every time, so no restart is tried.
    res = run_cli("launch", "--local", "2", "--detach", "--name", "loop", "-m", "dscluster.train",
                  "--data", str(tmp_path / "nope-data"), "--steps", "3", "--deepspeed", env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    run_dir = store.run_path(tmp_path / "shared", _run_id(res.stdout))
    rec = wait_for(lambda: store.read_record(run_dir).to_json()["status"] in store.FINISHED and store.read_record(run_dir).to_json(), 180)
    assert rec and rec["status"] == "failed", rec
    assert len(rec["attempts"]) == 1 and rec["exit_code"] == 3  # the first failing rank's code, not the SIGKILL
    exp = rec["explanation"]
    assert exp["signature"] == "program-error" and exp["retry"] is False
    assert "nope-data does not exist" in exp["cause"] and "dscluster data prepare" in exp["fix"]
    status = run_cli("status", rec["id"], env=env, timeout=120)
    assert "does not exist" in status.stdout and "SIGKILL" not in status.stdout
    assert not run_pids(rec["id"])


def test_restart_runs_the_same_program_with_its_environment_and_secrets_given_again(env, tmp_path):
    env = {**env, "HF_TOKEN": "hf_0123456789"}
    res = run_cli("launch", "--local", "2", "--detach", "--name", "loop", "--env", "OMP_NUM_THREADS=1",
                  "--env", "HF_TOKEN", str(SCRIPT), "--steps", "2", env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    old = store.run_path(tmp_path / "shared", _run_id(res.stdout))
    assert wait_for(lambda: store.read_record(old).to_json()["status"] in store.FINISHED, 180)
    assert run_cli("restart", old.name, env=env, timeout=120).returncode == 2  # the secret is not given again: named
    res = run_cli("restart", old.name, "--env", "HF_TOKEN", env=env, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.split() == [res.stdout.strip()] and "started from" in res.stderr  # into a pipe: the id alone
    new = store.run_path(tmp_path / "shared", res.stdout.strip())
    rec = wait_for(lambda: store.read_record(new).to_json()["status"] in store.FINISHED and store.read_record(new).to_json(), 180)
    assert rec and rec["status"] == "succeeded", rec
    old_launch = store.read_record(old).to_json()["launch"]
    assert rec["launch"]["args"] == old_launch["args"] == ["--steps", "2"]
    assert rec["launch"]["env"]["OMP_NUM_THREADS"] == "1" and "HF_TOKEN" not in rec["launch"]["env"]
    rank_logs = "".join(p.read_text() for p in (new / "logs").glob("*rank*.log"))
    assert "HF_TOKEN has 13 characters" in rank_logs
    assert not [p for p in new.rglob("*") if p.is_file() and b"hf_0123456789" in p.read_bytes()]


def test_a_stale_jit_lock_refuses_the_launch_at_once_instead_of_hanging(env, tmp_path):
    # A compile killed an hour ago left its lock: DeepSpeed's ranks would wait on it forever, in silence.
    ext = tmp_path / "ext"
    lock = ext / f"py{sys.version_info.major}{sys.version_info.minor}_cpu" / "fused_adam" / "lock"
    lock.parent.mkdir(parents=True)
    lock.touch()
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    env = {**env, "TORCH_EXTENSIONS_DIR": str(ext), "CUDA_VISIBLE_DEVICES": ""}
    slurm = ["--launcher", "slurm", "--nodes", "1", "--ntasks-per-node", "1", "--dry-run"]
    for how in (["--local", "1", "--detach"], slurm, ["--sbatch", *slurm[2:]]):
        t0 = time.monotonic()
        res = run_cli("launch", *how, str(SCRIPT), "--steps", "1", env=env, timeout=60)
        took = time.monotonic() - t0
        assert res.returncode == 4, (how, res.stdout + res.stderr)
        assert f"rm -f {lock}" in res.stderr and "Traceback" not in res.stderr, res.stderr
        assert took < 30, f"{how}: {took:.0f} s to refuse"
    assert not list((tmp_path / "shared").glob("runs/*")), "refused before any run directory exists"


def test_a_local_rank_killed_by_sigkill_is_shown_as_the_sigkill(env, tmp_path):
    # Rank 1 SIGKILLs itself; rank 0 takes a few seconds to go on the launcher's SIGTERM, so the launcher logs
    # the killed rank's code well after its "Killing subprocess" lines: `status` still names the signal, not
    # the local launcher's own exit status (once "exit 247  Killing subprocess N").
    script = tmp_path / "die.py"
    script.write_text("import os, signal, sys, time\n"
                      "signal.signal(signal.SIGTERM, lambda *_: (time.sleep(4), sys.exit(1)))\n"
                      "if os.environ.get('RANK') == '1':\n    time.sleep(2)\n    os.kill(os.getpid(), signal.SIGKILL)\n"
                      "time.sleep(120)\n")
    res = run_cli("launch", "--local", "2", "--detach", "--max-restarts", "0", "die.py", env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.split()[-1]
    run_dir = store.run_path(tmp_path / "shared", run_id)
    assert wait_for(lambda: store.read_record(run_dir).status in store.FINISHED, 240, 0.5)
    rec = store.read_record(run_dir)
    status = run_cli("status", run_id, env=env, cwd=tmp_path).stdout
    assert "killed by SIGKILL" in (rec.attempts[0].reason or ""), status
    shown = status.replace(run_id, "RUN")  # the id's time and random suffix may hold "247" themselves
    assert not re.search(r"\b247\b", shown) and rec.exit_code == 128 + signal.SIGKILL, status
