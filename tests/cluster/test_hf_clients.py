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

from dscluster.runs.records import store

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


TRAINER_ARGS = ["--per_device_train_batch_size", "2", "--report_to", "none", "--use_cpu"]


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


def _run_killed_mid_save(sim, work, dsc, script: str, out: str, extra: list[str], *, trainer: bool = True,
                         out_in_argv: bool = True, env: tuple[str, ...] = (), folder: str = "", names=None):
    """Launch `script` (checkpoints every 4 steps, 12 steps) with rank 0 SIGKILLed in the save at step 8; the
    restart resumes from the save at step 4 and finishes. `out`: the output directory (named on the command
    line unless `out_in_argv` is False); the checkpoints land in `out/folder`, named `names` (at steps 4, 8,
    12; the Trainer's checkpoint-N by default)."""
    first, torn_name, last = names or ("checkpoint-4", "checkpoint-8", "checkpoint-12")
    where = work / out / folder
    res = dsc("launch", "--hostfile", "hostfile", "--detach", "--max-restarts", "1", "--env", "KILL_RANK_AT_SAVE=0:8",
              *(f"--env={e}" for e in env), script, *(("--output_dir", out) if out_in_argv else ()), "--deepspeed",
              "ds_config.json", "--save_steps", "4", "--max_steps", "12", "--logging_steps", "2", *extra)
    assert res.returncode == 0, res.stderr
    run_id = res.stdout.strip()
    assert '"auto"' in res.stderr and "train_batch_size" in res.stderr  # said at launch: the Trainer fills them in
    try:
        rec = _record(work, run_id)
        assert rec.ds_config["zero_optimization"]["stage"] == 2  # the HF config is the run's, recorded
        # attempt 1 dies in the save at step 8; status says so, not "started from scratch" for attempt 2
        assert wait_for(lambda: len(_record(work, run_id).attempts) >= 2 or
                        _record(work, run_id).status in store.FINISHED, 1500, 1.0), _status(dsc, run_id)
        shown = _status(dsc, run_id)
        assert first in shown, shown
        assert wait_for(lambda: _record(work, run_id).status in store.FINISHED, 1500, 1.0), _status(dsc, run_id)
        rec = _record(work, run_id)
        shown = _status(dsc, run_id)
        assert rec.status == "succeeded", shown + dsc("logs", run_id).stdout[-4000:]
        # the torn save was moved aside (kept; beside Accelerate's checkpoints/, not in it), the restart
        # resumed from the one at step 4, then went on
        aside = (where.parent if folder == "checkpoints" else where) / ".torn"
        torn = list(aside.glob(f"{torn_name}-*"))
        assert len(torn) == 1 and not (torn[0] / "trainer_state.json").exists(), shown
        assert rec.attempts[1].resume_from == first
        assert "started from scratch" not in shown.split("attempt 2")[1], shown
        if trainer:  # the Trainer's progress bar says where it resumed
            assert f"resumed from {first}" in shown, shown
            assert (where / last / "trainer_state.json").exists()
        # charts: loss by step from rank 0's log (and the learning rate by step from DeepSpeed's monitor)
        rows = _metrics(work, run_id)
        loss_steps = sorted({r["step"] for r in rows if "loss" in r})
        assert {2, 4, 12} <= set(loss_steps), rows
        if trainer:
            assert {r["step"] for r in rows if r.get("source") == "deepspeed" and "lr" in r} >= {1, 12}, rows
        ckpt = dsc("ckpt", run_id).stdout
        assert last in ckpt and first in ckpt and str(where) in ckpt, ckpt
        verify = dsc("ckpt", "verify", run_id)
        assert verify.returncode == 0 and last in verify.stdout, verify.stdout + verify.stderr
        from dscluster.api import Run

        listed = [c.get("tag") for c in Run(run_id, [store.run_path(Path(work).parent, run_id).parent]).checkpoints()]
        assert first in listed and last in listed, listed
        return run_id, rec, shown
    finally:
        dsc("stop", run_id)


def test_hf_trainer_unchanged_is_charted_checkpoint_safe_and_honestly_reported(sim, work, dsc):
    run_id, rec, _ = _run_killed_mid_save(sim, work, dsc, "hf_trainer_script.py", "out_trainer", TRAINER_ARGS)
    assert rec.explanation is None  # succeeded: an earlier attempt's failure is history, beside it in attempts
    assert "killed by SIGKILL" in (rec.attempts[0].reason or ""), rec.attempts[0]
    exported = dsc("ckpt", "export", run_id)
    assert exported.returncode == 0, exported.stderr
    out = store.run_path(Path(work).parent, run_id) / "export" / "checkpoint-12"
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(out)  # loads without DeepSpeed
    assert model.config.num_hidden_layers == 2


def test_accelerate_script_unchanged_gets_the_same(sim, work, dsc):
    run_id, rec, _ = _run_killed_mid_save(sim, work, dsc, "accelerate_script.py", "out_accelerate", [], trainer=False)
    assert rec.explanation is None
    assert (work / "out_accelerate" / "checkpoint-12" / "random_states_2.pkl").exists()


def test_a_trainer_whose_output_dir_is_set_in_code_is_tracked_resumed_and_told(sim, work, dsc):
    # No --output_dir on the command line: the checkpoints are found from the folders the program wrote.
    _, rec, shown = _run_killed_mid_save(sim, work, dsc, "hf_trainer_script.py", "results/llama", TRAINER_ARGS,
                                         out_in_argv=False, env=("OUTPUT_DIR_IN_CODE=results/llama",))
    assert str(work / "results" / "llama") in rec.checkpoint_dirs


def test_accelerates_automatic_checkpoint_naming_is_tracked_and_never_called_a_fresh_start(sim, work, dsc):
    # ProjectConfiguration(automatic_checkpoint_naming=True): project_dir/checkpoints/checkpoint_0, _1, _2
    _, _, shown = _run_killed_mid_save(sim, work, dsc, "accelerate_script.py", "proj_auto", ["--layout", "automatic"],
                                       trainer=False, folder="checkpoints",
                                       names=("checkpoint_0", "checkpoint_1", "checkpoint_2"))
    assert (work / "proj_auto" / "checkpoints" / "checkpoint_2" / "random_states_2.pkl").exists()


def test_a_no_trainer_scripts_step_folders_are_tracked_and_its_resume_told(sim, work, dsc):
    _, _, shown = _run_killed_mid_save(sim, work, dsc, "accelerate_script.py", "out_steps", ["--layout", "step_N"],
                                       trainer=False, names=("step_4", "step_8", "step_12"))
    assert "resumed from step_4" in shown.split("attempt 2")[1], shown
