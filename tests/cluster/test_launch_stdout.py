"""`run=$(dscluster launch --detach ...)` captures the run id alone, through the real CLI in a shell pipe,
however chatty the controller's imports are: a ds_config with Adam makes `launch` import DeepSpeed to
look for the ops the ranks would compile (DeepSpeed's logger writes to stdout), and the run's
supervisor and ranks start for real (local launcher, gloo on CPU)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import test_launch_local
from polling import wait_for

from dscluster.runs.records import store

pytestmark = pytest.mark.slow
env = test_launch_local.env  # the fixture: DSCLUSTER_HOME / DSCLUSTER_SHARED under the test's tmp_path
ADAM = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
        "optimizer": {"type": "Adam", "params": {"lr": 0.001}}, "zero_optimization": {"stage": 0}}
RUN_ID = re.compile(r"[A-Za-z0-9_.-]+-\d{8}-\d{6}-[0-9a-f]{4}")


@pytest.fixture
def work(tmp_path):
    """A user's directory: a script that only says hello (nothing to build or train), the Adam ds_config."""
    (tmp_path / "hello.py").write_text("import os\nprint('hello from rank', os.environ.get('RANK'), flush=True)\n")
    (tmp_path / "ds_config.json").write_text(json.dumps(ADAM))
    return tmp_path


def shell(command: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """`command` in bash, as a user's script would run it; `dscluster` is this interpreter's."""
    return subprocess.run(["bash", "-c", f'dscluster() {{ "{sys.executable}" -m dscluster.cli "$@"; }}\n{command}'],
                          env=env, cwd=cwd, capture_output=True, text=True, timeout=180)


def _finished(tmp_path: Path, run_id: str) -> dict:
    run_dir = store.run_path(tmp_path / "shared", run_id)
    rec = wait_for(lambda: store.read_record(run_dir).to_json()["status"] in store.FINISHED and store.read_record(run_dir).to_json(), 180)
    assert rec, store.read_record(run_dir).to_json()
    return rec


def test_detach_into_a_pipe_prints_the_run_id_alone(env, work):
    res = shell('run=$(dscluster launch --local 1 --detach hello.py --deepspeed --deepspeed_config ds_config.json)'
                ' || exit 9\nprintf "[%s]" "$run"', env, work)
    assert res.returncode == 0, res.stdout + res.stderr
    assert RUN_ID.fullmatch(res.stdout[1:-1]) and res.stdout.startswith("[hello-"), res.stdout
    # Everything else is on stderr, where a person still reads it.
    assert "started on" in res.stderr and "dscluster logs" in res.stderr
    assert "Setting accelerator" not in res.stdout
    rec = _finished(work, res.stdout[1:-1])
    assert rec["status"] == "succeeded", rec


def test_json_into_a_pipe_is_json_alone(env, work):
    res = shell("dscluster launch --local 1 --json hello.py --deepspeed --deepspeed_config ds_config.json | cat",
                env, work)
    assert res.returncode == 0, res.stderr
    view = json.loads(res.stdout)  # nothing before or after it
    assert RUN_ID.fullmatch(view["id"]) and view["world_size"] == 1 and view["run_dir"].endswith(view["id"])
    _finished(work, view["id"])


def test_the_reference_trainer_module_detached_prints_its_id_alone(env, work):
    # -m dscluster.train with the same ds_config; its missing data fails the run itself, not the launch.
    res = shell("dscluster launch --local 1 --detach -m dscluster.train --data nope --steps 1 --deepspeed "
                "--deepspeed_config ds_config.json > id.txt", env, work)
    assert res.returncode == 0, res.stderr
    run_id = (work / "id.txt").read_text()
    assert RUN_ID.fullmatch(run_id.rstrip("\n")) and run_id.count("\n") == 1, run_id
    assert _finished(work, run_id.strip())["status"] == "failed"


def test_the_recipes_command_on_one_machine_needs_no_ssh_or_pdsh(env, work, tmp_path):
    # A GPU machine has neither: ssh and pdsh first on PATH here fail loudly and leave a mark.
    fake = tmp_path / "no-remote"
    fake.mkdir()
    for tool in ("ssh", "pdsh", "mpirun"):
        (fake / tool).write_text(f"#!/bin/sh\ntouch {fake}/{tool}.called\nexit 97\n")
        (fake / tool).chmod(0o755)
    script = Path(__file__).resolve().parents[1] / "data" / "min_ds_script.py"
    (work / "train.py").write_text(script.read_text())
    (work / "ds_config.json").write_text(json.dumps({**ADAM, "optimizer": {"type": "SGD", "params": {"lr": 0.05}}}))
    env = {**env, "PATH": f"{fake}:{env['PATH']}"}
    res = shell("dscluster launch --local 1 --detach train.py --deepspeed --deepspeed_config ds_config.json "
                "--steps 2", env, work)
    assert res.returncode == 0, res.stderr
    rec = _finished(work, res.stdout.strip())
    assert rec["status"] == "succeeded", rec
    assert not list(fake.glob("*.called")), list(fake.glob("*.called"))
    rank0 = next((store.run_path(work / "shared", rec["id"]) / "logs").glob("*_rank0.log")).read_text()
    assert "step 1 loss" in rank0 and "done" in rank0
