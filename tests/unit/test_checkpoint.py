"""Checkpoint commit protocol and retention at unit level (a fake engine writes the shard files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.train import checkpoint as ck


class FakeEngine:
    """Writes what DeepSpeed's save_checkpoint writes for ZeRO stage 1 with `world` ranks."""

    def __init__(self, world: int = 2, drop_shard: bool = False):
        self.world, self.drop_shard, self.calls = world, drop_shard, []

    def save_checkpoint(self, save_dir, tag, client_state, save_latest):
        assert save_latest is False  # `latest` is ours, written only after the commit
        self.calls.append(tag)
        d = Path(save_dir) / tag
        d.mkdir(parents=True, exist_ok=True)
        (d / "mp_rank_00_model_states.pt").write_bytes(b"model" + json.dumps(client_state).encode())
        for r in range(self.world - (1 if self.drop_shard else 0)):
            (d / f"bf16_zero_pp_rank_{r}_mp_rank_00_optim_states.pt").write_bytes(b"optim")


def _save(save_dir: Path, step: int, keep: int = 0, engine=None):
    ck.save(engine or FakeEngine(), save_dir, step, rank=0, world_size=2, zero_stage=1, keep=keep,
            client_state={"step": step}, barrier=lambda: None)


def test_commit_writes_marker_then_latest(tmp_path):
    _save(tmp_path, 10)
    commit = json.loads((tmp_path / "step-10" / ck.COMMIT_FILE).read_text())
    assert commit["step"] == 10 and "mp_rank_00_model_states.pt" in commit["files"]
    assert (tmp_path / ck.LATEST_FILE).read_text() == "step-10"
    assert ck.committed_steps(tmp_path) == [10] and ck.latest_committed(tmp_path) == 10


def test_uncommitted_steps_are_invisible(tmp_path):
    _save(tmp_path, 10)
    (tmp_path / "step-20").mkdir()  # a crash mid-save: shards, no COMMIT.json
    (tmp_path / "step-20" / "mp_rank_00_model_states.pt").write_bytes(b"trunc")
    (tmp_path / "notes").mkdir()
    assert ck.committed_steps(tmp_path) == [10]
    assert ck.resolve_resume(tmp_path, "auto") == 10


def test_incomplete_save_is_not_committed(tmp_path):
    _save(tmp_path, 10)
    with pytest.raises(ck.CheckpointError, match="1 optimizer shards, expected 2"):
        _save(tmp_path, 20, engine=FakeEngine(drop_shard=True))
    assert ck.committed_steps(tmp_path) == [10] and (tmp_path / "latest").read_text() == "step-10"


def test_retention_keeps_exactly_k_and_only_touches_committed_steps(tmp_path):
    (tmp_path / "step-5").mkdir()  # an uncommitted leftover: never deleted by retention
    (tmp_path / "mine.txt").write_text("user file")
    for step in (10, 20, 30, 40):
        _save(tmp_path, step, keep=2)
    assert ck.committed_steps(tmp_path) == [30, 40]
    assert not (tmp_path / "step-10").exists() and not (tmp_path / "step-20").exists()
    assert (tmp_path / "step-5").exists() and (tmp_path / "mine.txt").read_text() == "user file"
    assert ck.apply_retention(tmp_path, 0) == []  # keep 0 = keep everything


def test_a_leftover_with_the_same_tag_is_set_aside_not_deleted(tmp_path):
    (tmp_path / "step-10").mkdir()
    (tmp_path / "step-10" / "partial.pt").write_bytes(b"x")
    _save(tmp_path, 10)
    assert (tmp_path / "step-10.incomplete-1" / "partial.pt").exists()
    assert ck.committed_steps(tmp_path) == [10]
    with pytest.raises(ck.CheckpointError, match="already committed"):
        ck.set_aside_uncommitted(tmp_path, 10)


def test_resume_choices(tmp_path):
    assert ck.resolve_resume(tmp_path, "auto") is None and ck.resolve_resume(tmp_path, "never") is None
    _save(tmp_path, 10)
    _save(tmp_path, 20)
    assert ck.resolve_resume(tmp_path, "step-20") == 20 and ck.resolve_resume(tmp_path, "20") == 20
    for value, match in [("never", "already holds committed"), ("step-15", "not a committed checkpoint"),
                         ("step-10", "overwrite the newer committed step-20"), ("latest", "auto, never")]:
        with pytest.raises(ConfigError, match=match) as err:
            ck.resolve_resume(tmp_path, value)
        assert err.value.setting == "--resume"


def test_unwritable_save_dir(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PermissionNeeded) as err:
        ck.check_writable(blocker / "ckpt")  # a file where a directory must go: fails even as root
    assert err.value.setting == "--save-dir"
    ck.check_writable(tmp_path / "new" / "ckpt")
    assert (tmp_path / "new" / "ckpt").is_dir() and not list((tmp_path / "new" / "ckpt").iterdir())


def test_saves_skip_the_crc_pass_and_round_trip_exactly(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.serialization import config

    before = (config.save.compute_crc32, config.save.use_pinned_memory_for_d2h)
    state = {"w": torch.randn(1000, 33), "step": 7}
    seen = {}

    class TorchEngine:
        def save_checkpoint(self, save_dir, tag, client_state, save_latest):
            seen["crc"] = config.save.compute_crc32
            d = Path(save_dir) / tag
            d.mkdir(parents=True)
            torch.save(state, d / "mp_rank_00_model_states.pt")

    ck.save(TorchEngine(), tmp_path, 3, rank=0, world_size=1, zero_stage=0, keep=0, client_state={},
            barrier=lambda: None)
    assert seen["crc"] is False
    assert (config.save.compute_crc32, config.save.use_pinned_memory_for_d2h) == before  # restored
    loaded = torch.load(tmp_path / "step-3" / "mp_rank_00_model_states.pt")
    assert loaded["step"] == 7 and torch.equal(loaded["w"], state["w"])


def test_early_writeback_syncs_files_while_they_are_written_and_stops(tmp_path, monkeypatch):
    synced = []
    real = ck.os.fdatasync
    monkeypatch.setattr(ck.os, "fdatasync", lambda fd: (synced.append(fd), real(fd)))
    step_dir = tmp_path / "step-1"
    step_dir.mkdir()
    with ck.early_writeback(step_dir, interval_s=0.01):
        (step_dir / "mp_rank_00_model_states.pt").write_bytes(b"x" * 1000)
        import time

        time.sleep(0.2)
    assert synced  # the file was flushed during the save, not only at commit
    count = len(synced)
    time.sleep(0.05)
    assert len(synced) == count  # the thread is gone after the save


def test_a_damaged_newest_step_is_named_not_loaded_and_the_listing_shows_it(tmp_path):
    from dscluster.commands.ckpt import checkpoints

    _save(tmp_path, 10)
    _save(tmp_path, 20)
    assert ck.damage(tmp_path / "step-20") is None and ck.resolve_resume(tmp_path, "auto") == 20
    model = tmp_path / "step-20" / "mp_rank_00_model_states.pt"
    model.write_bytes(model.read_bytes()[:3])  # a disk fault or a hand edit after the commit
    assert "mp_rank_00_model_states.pt is 3 bytes" in ck.damage(tmp_path / "step-20")
    with pytest.raises(ck.CheckpointError, match="step-20 is damaged") as err:
        ck.resolve_resume(tmp_path, "auto")
    assert "resumes from step-10" in err.value.hint and "mv " in err.value.hint
    assert [c["damage"] is None for c in checkpoints(tmp_path)] == [True, False]
    assert model.read_bytes()  # nothing was deleted on the way
    (tmp_path / "step-10" / ck.COMMIT_FILE).write_text("[]")
    assert ck.damage(tmp_path / "step-10").startswith("COMMIT.json is unreadable")
    model.unlink()
    assert ck.damage(tmp_path / "step-20") == "mp_rank_00_model_states.pt is missing"


def test_a_resume_with_another_batch_or_schedule_is_named():
    from dscluster.train.loop import resume_differences

    saved = {"step": 150, "global_batch": 32, "seq_len": 128, "scheduler": "WarmupCosineLR"}
    now = {"global_batch": 16, "seq_len": 128, "scheduler": None}
    diffs = resume_differences(saved, now)
    assert len(diffs) == 2 and "global batch" in diffs[0] and "was 32 when step-150 was saved, now 16" in diffs[0]
    assert "scheduler was WarmupCosineLR" in diffs[1]
    assert resume_differences({"step": 5}, now) == []  # a checkpoint from before these facts were kept


def test_a_diverged_loss_stops_training_before_anything_is_saved():
    from dscluster.train.loop import TrainingDiverged, check_finite

    check_finite(2.5, 10, 3e-4)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(TrainingDiverged, match="diverged") as err:
            check_finite(bad, 10, 3e-4)
        assert "--lr" in err.value.hint and err.value.exit_code == 5


def test_a_step_saved_with_another_zero_layout_is_refused_before_deepspeed_loads_it(tmp_path):
    _save(tmp_path, 10)  # world size 2, ZeRO stage 1
    ck.check_compatible(tmp_path, 10, zero_stage=1, world_size=2)
    with pytest.raises(ck.CheckpointError, match="ZeRO stage 1; this run uses stage 3") as err:
        ck.check_compatible(tmp_path, 10, zero_stage=3, world_size=2)
    assert "zero_optimization.stage 1" in err.value.hint
    # Another rank count is no refusal: the resume converts the step to DeepSpeed's universal format.
    ck.check_compatible(tmp_path, 10, zero_stage=1, world_size=4)
    step_dir = tmp_path / "step-10"
    assert ck.needs_universal(step_dir, 1, 4) and not ck.needs_universal(step_dir, 1, 2)
    assert not ck.needs_universal(step_dir, 0, 4)  # ZeRO stage 0: nothing is partitioned


def test_resuming_a_named_step_from_an_empty_save_dir_says_it_is_empty(tmp_path):
    with pytest.raises(ConfigError, match="holds no committed checkpoint") as err:
        ck.resolve_resume(tmp_path, "step-3")
    assert "--resume auto" in err.value.hint
