"""A user's own DeepSpeed script on one GPU, started with the recipe's command line with only
`deepspeed` replaced: `dscluster launch --local 1 train.py --deepspeed --deepspeed_config ds_config.json`
(device machine only). It finishes; its metrics, the one line it logs (`dscluster.log`) and DeepSpeed's
own monitor that dscluster added to its ds_config, are read back by `Run.metrics()`; its checkpoint is
committed. A hung NCCL collective times out and PyTorch's flight recorder, which dscluster turns on for
every run, dumps its record into the run directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import run_cli

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
# The recipe's ds_config, in the precision an H200 trains in.
DS_CONFIG = {"train_batch_size": 16, "train_micro_batch_size_per_gpu": 16, "gradient_accumulation_steps": 1,
             "optimizer": {"type": "AdamW", "params": {"lr": 1e-3, "torch_adam": True}},
             "bf16": {"enabled": True}, "zero_optimization": {"stage": 1}, "steps_per_print": 1}


@pytest.fixture
def work(tmp_path, monkeypatch):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU here")
    shutil.copy(DATA / "gpu_user_script.py", tmp_path / "train.py")
    (tmp_path / "ds_config.json").write_text(json.dumps(DS_CONFIG))
    for name, sub in (("DSCLUSTER_HOME", "home"), ("DSCLUSTER_SHARED", "shared")):
        monkeypatch.setenv(name, str(tmp_path / sub))
    monkeypatch.delenv("DSCLUSTER_CLUSTER", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    return tmp_path


def _launch(work: Path, *args: str) -> str:
    res = run_cli("launch", "--local", "1", "--detach", *args, cwd=work, timeout=180)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    return res.stdout.strip().splitlines()[-1]


def _wait_end(work: Path, run_id: str, timeout: float) -> dict:
    from dscluster.runs.records import store

    run_dir = store.run_path(work / "shared", run_id)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        record = store.read_record(run_dir).to_json()
        if record.get("status") in store.FINISHED:
            return record
        time.sleep(0.5)
    logs = "".join(p.read_text()[-2000:] for p in sorted((run_dir / "logs").glob("*.log")))
    raise AssertionError(f"run {run_id} did not end in {timeout}s: {store.read_record(run_dir).to_json()}\n{logs}")


def test_the_recipes_command_runs_a_users_script_on_the_gpu(work):
    import dscluster
    from dscluster.runs.records import store

    run_id = _launch(work, "train.py", "--deepspeed", "--deepspeed_config", "ds_config.json", "--steps", "6")
    record = _wait_end(work, run_id, 240)
    run_dir = store.run_path(work / "shared", run_id)
    rank0 = (run_dir / "logs").glob("*rank0*.log")
    log = "".join(p.read_text() for p in rank0)
    assert record["status"] == "succeeded", (record, log[-3000:])
    assert "on cuda:0" in log and "done" in log, log[-3000:]
    frame = dscluster.Run(run_id).metrics()
    mine = frame[frame["loss"].notna()] if "loss" in frame else frame.iloc[0:0]
    assert list(mine["step"]) == [1, 2, 3, 4, 5, 6] and set(mine["device"]) == {"cuda:0"}, frame.to_dict("records")
    ds = frame[frame.get("source") == "deepspeed"] if "source" in frame else frame.iloc[0:0]
    assert len(ds) >= 5 and (ds["lr"] == 1e-3).all(), frame.to_dict("records")
    # The ds_config the ranks read is the user's plus DeepSpeed's monitor, writing into the run directory.
    assert json.loads((run_dir / "ds_config.json").read_text())["csv_monitor"]["enabled"] is True
    # Checkpoints committed through dscluster.checkpoint: step 3 and step 6, `latest` at the last one.
    ckpt_dir = store.save_dir(run_dir, store.read_record(run_dir))
    from dscluster.checkpoint import committed_steps

    assert committed_steps(ckpt_dir) == [3, 6], sorted(p.name for p in ckpt_dir.iterdir())
    assert (ckpt_dir / "step-6" / "COMMIT.json").is_file()
    assert (ckpt_dir / "latest").read_text().strip() == "step-6"


def test_a_hung_nccl_collective_leaves_the_flight_recorder_dump_in_the_run_directory(work):
    from dscluster.runs.records import store

    run_id = _launch(work, "--max-restarts", "0", "train.py", "--hang-collective", "--timeout", "10")
    record = _wait_end(work, run_id, 150)
    run_dir = store.run_path(work / "shared", run_id)
    log = "".join(p.read_text() for p in (run_dir / "logs").glob("*.log"))
    assert record["status"] == "failed" and "first all_reduce done" in log, (record, log[-3000:])
    dumps = sorted((run_dir / "nccl_trace").glob("rank_*"))
    assert dumps and dumps[0].stat().st_size > 0, (sorted(p.name for p in run_dir.rglob("*")), log[-3000:])
    print(f"flight recorder dump: {dumps[0].name}, {dumps[0].stat().st_size} bytes")


def test_a_users_device_mismatch_is_shown_as_its_own_line_and_not_restarted(work):
    """The user's own RuntimeError (a batch left on the CPU) is the explanation: its type, message and the
    script's file:line, with rank and node, in status; a restart cannot help, so none of the two is spent.
    The same failure from a plain `deepspeed` run's output, through `dscluster explain`."""
    from dscluster.runs.records import store

    run_id = _launch(work, "--max-restarts", "2", "train.py", "--deepspeed", "--deepspeed_config", "ds_config.json",
                     "--steps", "6", "--cpu-batch-at", "2")
    record = _wait_end(work, run_id, 240)
    assert record["status"] == "failed" and len(record["attempts"]) == 1, record
    exp = record["explanation"]
    assert exp["signature"] == "device-mismatch" and exp["restart_can_help"] is False, exp
    assert exp["error"]["rank"] == 0 and exp["error"]["where"].endswith("train.py:55"), exp
    status = run_cli("status", run_id, cwd=work, timeout=60).stdout
    assert "first error: rank 0" in status and "Expected all tensors to be on the same device" in status, status
    assert "train.py:55" in status and "not restarted: a restart cannot help" in status, status
    print(status)
    # The recipe's own command, no dscluster: its output explained after the fact.
    # (`deepspeed` is DeepSpeed's runner module; its console script is absent where DeepSpeed was installed
    # with `pip --target`, as on the GPU machines)
    deepspeed = [sys.executable, "-m", "deepspeed.launcher.runner"]
    raw = subprocess.run([*deepspeed, "--num_gpus", "1", "train.py", "--deepspeed", "--deepspeed_config",
                          "ds_config.json", "--steps", "6", "--cpu-batch-at", "2"], cwd=work, capture_output=True,
                         text=True, timeout=240,
                         # dscluster.checkpoint needs a directory where no dscluster launch names one
                         env={**os.environ, "DSCLUSTER_CHECKPOINT_DIR": str(work / "raw-checkpoints")})
    assert raw.returncode != 0
    (work / "raw.log").write_text(raw.stdout + raw.stderr)
    explained = run_cli("explain", "raw.log", cwd=work, timeout=60)
    print(explained.stdout)
    assert explained.returncode == 0 and "RuntimeError: Expected all tensors to be on the same device" in \
        explained.stdout and "train.py:55" in explained.stdout and "restart can help: no" in explained.stdout
    assert store.run_path(work / "shared", run_id).is_dir()
