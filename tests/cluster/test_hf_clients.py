"""The programs users already have, unchanged, on the simulated 3-node cluster (real sshd, pdsh, DeepSpeed's
launcher, gloo): a Hugging Face Trainer script with HF's `--deepspeed ds_config.json` ("auto" values,
ZeRO-2) is charted, a rank killed in the middle of a checkpoint's save leaves a torn checkpoint-N that the
supervisor moves aside, the restart resumes from the previous complete one and finishes, and `status` says
what happened at every step. The same for an Accelerate script (DeepSpeedPlugin with HF's config)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from polling import cli_runner, wait_for

from dscluster.runs import store

pytest.importorskip("transformers")
pytest.importorskip("accelerate")
pytestmark = [pytest.mark.root, pytest.mark.cluster, pytest.mark.slow]
DATA = Path(__file__).resolve().parents[1] / "data"
HF_DS_CONFIG = {  # as HF's DeepSpeed docs write it
    "train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto", "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto", "bf16": {"enabled": "auto"},
    "zero_optimization": {"stage": 2, "overlap_comm": False, "reduce_bucket_size": "auto",
                          "allgather_bucket_size": 5e7},
}


@pytest.fixture(scope="module")
def sim(sim_cluster):
    return sim_cluster(3, name="hf31")


@pytest.fixture(scope="module")
def work(sim):
    shared = Path(sim.spec.shared_dir) / "hfwork"
    shared.mkdir(exist_ok=True)
    for name in ("hf_trainer_script.py", "accelerate_script.py"):
        shutil.copy(DATA / name, shared / name)
    (shared / "ds_config.json").write_text(json.dumps(HF_DS_CONFIG, indent=2))
    (shared / "hostfile").write_text("".join(f"{n.address} slots=1\n" for n in sim.spec.nodes))
    os.chmod(shared, 0o777)  # the node user writes the Trainer's output directory here
    return shared


@pytest.fixture(scope="module")
def dsc(sim, work):
    return cli_runner(sim, work)


def _record(work: Path, run_id: str):
    return store.read_record(store.run_path(Path(work).parent, run_id))


def _status(dsc, run_id: str) -> str:
    return dsc("status", run_id).stdout


def _metrics(work: Path, run_id: str) -> list[dict]:
    path = store.run_path(Path(work).parent, run_id) / "metrics.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _run_killed_mid_save(sim, work, dsc, script: str, out: str, extra: list[str], *, trainer: bool = True):
    res = dsc("launch", "--hostfile", "hostfile", "--detach", "--max-restarts", "1", "--env", "KILL_RANK_AT_SAVE=0:8",
              script, "--output_dir", out, "--deepspeed", "ds_config.json", "--save_steps", "4", "--max_steps", "12",
              "--logging_steps", "2", *extra)
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    assert '"auto"' in res.stderr and "train_batch_size" in res.stderr  # said at launch: the Trainer fills them in
    try:
        rec = _record(work, run_id)
        assert rec.ds_config["zero_optimization"]["stage"] == 2  # the HF config is the run's, recorded
        # attempt 1 dies in the save of checkpoint-8; status says so, not "started from scratch" for attempt 2
        assert wait_for(lambda: len(_record(work, run_id).attempts) >= 2 or
                        _record(work, run_id).status in store.FINISHED, 600, 1.0), _status(dsc, run_id)
        shown = _status(dsc, run_id)
        assert "checkpoint-4" in shown, shown
        assert wait_for(lambda: _record(work, run_id).status in store.FINISHED, 600, 1.0), _status(dsc, run_id)
        rec = _record(work, run_id)
        shown = _status(dsc, run_id)
        assert rec.status == "succeeded", shown + dsc("logs", run_id).stdout[-4000:]
        # the torn checkpoint-8 was moved aside (kept), the restart resumed from checkpoint-4, then went on
        torn = list((work / out / ".torn").glob("checkpoint-8-*"))
        assert len(torn) == 1 and not (torn[0] / "trainer_state.json").exists(), shown
        assert rec.attempts[1].resume_from == "checkpoint-4"
        assert "started from scratch" not in shown.split("attempt 2")[1], shown
        if trainer:  # the Trainer's progress bar says where it resumed
            assert "resumed from checkpoint-4" in shown, shown
            assert (work / out / "checkpoint-12" / "trainer_state.json").exists()
        # charts: loss by step from rank 0's log (and the learning rate by step from DeepSpeed's monitor)
        rows = _metrics(work, run_id)
        loss_steps = sorted({r["step"] for r in rows if "loss" in r})
        assert {2, 4, 12} <= set(loss_steps), rows
        if trainer:
            assert {r["step"] for r in rows if r.get("source") == "deepspeed" and "lr" in r} >= {1, 12}, rows
        ckpt = dsc("ckpt", run_id).stdout
        assert "checkpoint-12" in ckpt and "checkpoint-4" in ckpt, ckpt
        verify = dsc("ckpt", "verify", run_id)
        assert verify.returncode == 0 and "checkpoint-12" in verify.stdout, verify.stdout + verify.stderr
        return run_id, rec
    finally:
        dsc("stop", run_id)


def test_hf_trainer_unchanged_is_charted_checkpoint_safe_and_honestly_reported(sim, work, dsc):
    run_id, rec = _run_killed_mid_save(sim, work, dsc, "hf_trainer_script.py", "out_trainer",
                                       ["--per_device_train_batch_size", "2", "--report_to", "none", "--use_cpu"])
    assert rec.explanation is None  # succeeded: an earlier attempt's failure is history, beside it in attempts
    assert "killed by SIGKILL" in (rec.attempts[0].reason or ""), rec.attempts[0]
    exported = dsc("ckpt", "export", run_id)
    assert exported.returncode == 0, exported.stderr
    out = store.run_path(Path(work).parent, run_id) / "export" / "checkpoint-12"
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(out)  # loads without DeepSpeed
    assert model.config.num_hidden_layers == 2


def test_accelerate_script_unchanged_gets_the_same(sim, work, dsc):
    run_id, rec = _run_killed_mid_save(sim, work, dsc, "accelerate_script.py", "out_accelerate", [], trainer=False)
    assert rec.explanation is None
    assert (work / "out_accelerate" / "checkpoint-12" / "random_states_2.pkl").exists()
