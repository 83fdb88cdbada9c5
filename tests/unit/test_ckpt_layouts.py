"""Accelerate's own checkpoint layouts and a Trainer whose output_dir is set in code, at unit level: every
layout judged by its own completeness rules, the folders a program saves to found from what it wrote (not
its argv), and "started from scratch" said only when it is known."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from dscluster import ckptlayout, hfckpt
from dscluster.runs.records.hflog import HfLogBridge


def _accelerate_save(folder: Path, ranks: int = 2, done: int | None = None, deepspeed: bool = True) -> Path:
    """What accelerator.save_state(folder) writes: DeepSpeed's engine in pytorch_model/ (or the model's own
    weights), then each process's random_states_R.pkl last. `done`: how many processes got that far."""
    folder.mkdir(parents=True)
    if deepspeed:
        engine = folder / "pytorch_model"
        (engine / "global_step4").mkdir(parents=True)
        (engine / "latest").write_text("global_step4")
        (engine / "global_step4" / "mp_rank_00_model_states.pt").write_bytes(b"m")
        for r in range(ranks):
            (engine / "global_step4" / f"bf16_zero_pp_rank_{r}_mp_rank_00_optim_states.pt").write_bytes(b"o")
    else:
        (folder / "model.safetensors").write_bytes(b"w" * 8)
        (folder / "optimizer.bin").write_bytes(b"o")
    for r in range(ranks if done is None else done):
        (folder / f"random_states_{r}.pkl").write_bytes(b"r")
    return folder


def test_each_library_layout_is_named_and_nothing_else_is():
    assert ckptlayout.layout("checkpoint-30", "out") == (ckptlayout.TRAINER, 30)
    assert ckptlayout.layout("checkpoint_2", "checkpoints") == (ckptlayout.AUTOMATIC, 2)
    assert ckptlayout.layout("checkpoint_2", "out") is None  # Accelerate's automatic naming lives in checkpoints/
    assert ckptlayout.layout("step_500", "out") == (ckptlayout.STEPS, 500)
    assert ckptlayout.layout("epoch_1", "out") == (ckptlayout.EPOCHS, 1)
    for name in ("step-5", "checkpoint-x", "global_step4", "steps_5", "epoch_1.bak"):
        assert ckptlayout.layout(name, "out") is None, name


def test_accelerate_layouts_are_complete_only_with_every_processs_random_states(tmp_path):
    auto = tmp_path / "proj" / "checkpoints"
    _accelerate_save(auto / "checkpoint_0")
    _accelerate_save(auto / "checkpoint_1", done=1)  # process 1 died before its random states
    judged = {c.name: c for c in hfckpt.checkpoints(auto, world_size=2)}
    assert judged["checkpoint_0"].complete and not judged["checkpoint_1"].complete
    assert "random_states_1.pkl" in judged["checkpoint_1"].why
    assert hfckpt.newest_complete(auto, 2).name == "checkpoint_0"
    # aside beside checkpoints/, never in it: Accelerate's load_state() takes every folder there for a checkpoint_N
    (moved,) = hfckpt.move_torn(auto, 2)
    assert moved[1].parent == tmp_path / "proj" / ".torn" and [p.name for p in auto.iterdir()] == ["checkpoint_0"]

    out = tmp_path / "out"
    _accelerate_save(out / "step_4", deepspeed=False)
    _accelerate_save(out / "step_8", deepspeed=False, done=0)
    (out / "step_12").mkdir()  # the save had only made the folder
    _accelerate_save(out / "epoch_0", ranks=2)
    torn_engine = _accelerate_save(out / "epoch_1", ranks=2)
    (torn_engine / "pytorch_model" / "latest").write_text("global_step9")  # DeepSpeed's part not finished
    judged = {c.name: c for c in hfckpt.checkpoints(out, world_size=2)}
    assert {n for n, c in judged.items() if c.complete} == {"step_4", "epoch_0"}
    assert "global_step9" in judged["epoch_1"].why and "random_states_0.pkl" in judged["step_12"].why
    # torn ones aside (kept), so a script resuming from the newest folder resumes from a complete one
    moved = hfckpt.move_torn(out, 2)
    assert sorted(src.name for src, _ in moved) == ["epoch_1", "step_12", "step_8"]
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["epoch_0", "step_4"]


def test_the_folders_a_program_saves_to_are_found_from_what_it_wrote(tmp_path):
    began = time.time()
    cwd = tmp_path / "work"
    old = cwd / "old_run"
    _accelerate_save(old / "step_4")
    os.utime(old / "step_4", (began - 3600, began - 3600))  # an earlier run's: not this one's
    code_dir = cwd / "outputs" / "llama"  # TrainingArguments(output_dir="outputs/llama") in the script
    (code_dir / "checkpoint-10").mkdir(parents=True)
    _accelerate_save(cwd / "proj" / "checkpoints" / "checkpoint_0")
    (cwd / ".venv" / "checkpoint-1").mkdir(parents=True)  # hidden trees are never searched
    (cwd / "runs" / "r1" / "export" / "checkpoint-3").mkdir(parents=True)  # dscluster's own run directories
    found = ckptlayout.discover(cwd, began - 1, skip=(cwd / "runs",))
    assert sorted(found) == sorted([code_dir, cwd / "proj" / "checkpoints"])
    assert ckptlayout.discover(cwd, began - 7200, skip=(cwd / "runs",)).count(old) == 1
    assert ckptlayout.discover(cwd, began - 1, depth=1) == []  # bounded


def test_a_save_made_just_before_the_run_began_is_not_the_runs_whatever_the_clocks(tmp_path):
    # Seen on the H200: a run launched seconds after another in the same folder listed the other's
    # out_dsc/checkpoint-60 as its own and said its resumed attempt "started from scratch, although
    # checkpoint-60 was complete". The snapshot taken before the ranks start is what is not this run's.
    cwd = tmp_path / "work"
    (cwd / "out_dsc" / "checkpoint-60").mkdir(parents=True)  # the run before, finished a second ago
    (cwd / "results" / "llama" / "checkpoint-30").mkdir(parents=True)  # kept from an earlier run, resumed now
    before = ckptlayout.snapshot(cwd)
    assert sorted(Path(p).name for p in before) == ["checkpoint-30", "checkpoint-60"]
    assert ckptlayout.discover(cwd, time.time() - 2, before=before) == []  # within the clock slack: still not
    (cwd / "results" / "llama" / "checkpoint-40").mkdir()  # this run's first save
    assert ckptlayout.discover(cwd, time.time() - 2, before=before) == [cwd / "results" / "llama"]
    old = cwd / "out_dsc" / "checkpoint-60"
    os.utime(old, (time.time() + 5, time.time() + 5))  # written again by this run
    assert sorted(ckptlayout.discover(cwd, 0, before=before)) == sorted([cwd / "out_dsc", cwd / "results" / "llama"])


def _bar_log(run_dir: Path, counter: int) -> None:
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    (run_dir / "logs" / "a_rank0.log").write_text(f"  8%|#         | {counter}/12 [00:01<00:11,  1.00it/s]\r")


def test_a_fresh_looking_start_is_from_scratch_only_where_the_checkpoints_were_known(tmp_path):
    unknown = tmp_path / "unknown"
    _bar_log(unknown, 1)
    bridge = HfLogBridge(unknown)
    bridge.expected[2], bridge.known[2] = None, False  # output_dir set in code, nothing seen written yet
    bridge.tick(2)
    got = json.loads((unknown / "resumes" / "attempt-2.json").read_text())
    assert got["tag"] is None and got["known"] is False
    known = tmp_path / "known"
    _bar_log(known, 1)
    bridge = HfLogBridge(known)
    bridge.expected[2], bridge.known[2] = None, True
    bridge.tick(2)
    assert json.loads((known / "resumes" / "attempt-2.json").read_text())["known"] is True
    step = tmp_path / "step"
    _bar_log(step, 9)
    bridge = HfLogBridge(step)
    bridge.expected[2], bridge.expected_tag[2], bridge.known[2] = 8, "step_8", True
    bridge.tick(2)
    got = json.loads((step / "resumes" / "attempt-2.json").read_text())
    assert got["tag"] == "step_8" and got["step"] == 8


def test_accelerates_own_lines_name_the_output_folder_and_the_resume(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "x_rank0.log").write_text(
        "12/05/2026 06:10:01 - INFO - accelerate.accelerator - Saving current state to out/step_4\n"
        "Resumed from checkpoint: /w/out/step_4\n{'loss': 1.0, 'step': 6}\n")
    bridge = HfLogBridge(tmp_path, cwd="/w")
    bridge.tick(2, final=True)
    assert bridge.output_dirs == [Path("/w/out")]
    got = json.loads((tmp_path / "resumes" / "attempt-2.json").read_text())
    assert got["tag"] == "step_4" and got["step"] == 4 and "Accelerate" in got["via"]


def test_an_accelerate_attempt_that_never_says_is_not_called_a_fresh_start(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "x_rank0.log").write_text("{'loss': 1.0, 'step': 6}\n")
    HfLogBridge(tmp_path).tick(2, final=True)
    got = json.loads((tmp_path / "resumes" / "attempt-2.json").read_text())
    assert got["tag"] is None and got["known"] is False


def test_status_says_not_known_instead_of_from_scratch():
    from dscluster.commands.runs import resume_note
    from dscluster.runs.records.record import Attempt
    from dscluster.runs.views.summary import ShownAttempt

    unknown = ShownAttempt(Attempt(2), {"hf": True, "tag": None, "known": False})
    assert "not known" in resume_note(unknown) and "scratch" not in resume_note(unknown)
    known = ShownAttempt(Attempt(2), {"hf": True, "tag": None, "known": True})
    assert "started from scratch" in resume_note(known)
    resumed = ShownAttempt(Attempt(2), {"hf": True, "tag": "checkpoint_3", "via": "Accelerate (rank 0's log)"})
    assert "resumed from checkpoint_3" in resume_note(resumed)
    # Accelerate's automatic checkpoint_0 was there and rank 0's log never said: not "started from scratch"
    silent = ShownAttempt(Attempt(2, resume_from="checkpoint_0"), {"hf": True, "tag": None, "known": False})
    assert "does not say whether it resumed" in resume_note(silent) and "scratch" not in resume_note(silent)
