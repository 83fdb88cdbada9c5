"""Checkpoints after the commit: content hashes and verify, the resume contract between supervisor and
script, status's resume line, and export (a ZeRO stage 0 step written here as DeepSpeed lays it out;
the ZeRO path through zero_to_fp32 runs in tests/cluster/test_checkpoint_api.py)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import torch

from dscluster.commands.runs import resume_note as _resume_note
from dscluster.errors import ConfigError
from dscluster.train import checkpoint as ck
from dscluster.train import export as ex
from dscluster.train.model import GPT, GPTConfig


def resume_note(shown: dict) -> str | None:
    """commands.runs.resume_note of an attempt as `dscluster status --json` shows it (with `resumed`)."""
    from dscluster.runs.records.record import Attempt
    from dscluster.runs.views.summary import ShownAttempt

    return _resume_note(ShownAttempt(Attempt.from_json(shown), shown.get("resumed")))

SRC = Path(__file__).resolve().parents[2] / "src" / "dscluster"


class Engine:
    def save_checkpoint(self, save_dir, tag, client_state, save_latest):
        d = Path(save_dir) / tag
        d.mkdir(parents=True, exist_ok=True)
        (d / "mp_rank_00_model_states.pt").write_bytes(b"m" * 3000)
        for r in range(2):
            (d / f"zero_pp_rank_{r}_mp_rank_00_optim_states.pt").write_bytes(bytes([r]) * 70_000)


def _commit(tmp_path: Path, step: int = 4) -> Path:
    ck.save(Engine(), tmp_path, step, rank=0, world_size=2, zero_stage=1, keep=0, client_state={},
            barrier=lambda: None)
    return tmp_path / ck.tag_for(step)


def test_commit_records_a_content_hash_and_verify_finds_a_same_size_change(tmp_path, monkeypatch):
    from dscluster.train import commits

    monkeypatch.setattr(commits, "_PIECE", 16 << 10)  # several pieces per shard: the tree hash is exercised
    step_dir = _commit(tmp_path)
    commit = ck.read_commit(step_dir)
    assert commit["hash"] == ck.HASH_NAME and set(commit["sha256"]) == set(commit["files"])
    assert ck.verify(step_dir) == []
    shard = step_dir / "zero_pp_rank_1_mp_rank_00_optim_states.pt"
    data = bytearray(shard.read_bytes())
    data[50_000] ^= 1
    shard.write_bytes(bytes(data))
    assert ck.damage(step_dir) is None  # sizes alone cannot tell
    assert ck.verify(step_dir) == [f"{shard.name} has other contents than when committed (content hash differs)"]
    assert ck.verify(step_dir, ["mp_rank_00_model_states.pt"]) == []  # a rank's share
    (step_dir / "mp_rank_00_model_states.pt").unlink()
    assert "mp_rank_00_model_states.pt is missing" in ck.verify(step_dir)


def test_a_step_committed_before_hashes_is_checked_by_size(tmp_path):
    step_dir = _commit(tmp_path)
    commit = ck.read_commit(step_dir)
    del commit["sha256"]
    (step_dir / ck.COMMIT_FILE).write_text(json.dumps(commit))
    assert ck.verify(step_dir) == []
    (step_dir / "mp_rank_00_model_states.pt").write_bytes(b"short")
    assert "mp_rank_00_model_states.pt is 5 bytes, 3,000 when committed" in ck.verify(step_dir)


def test_load_problems_names_a_file_that_torch_cannot_load(tmp_path):
    torch.save({"a": torch.ones(2)}, tmp_path / "good.pt")
    (tmp_path / "bad.pt").write_bytes(b"not a zip")
    problems = ck.load_problems(tmp_path)
    assert len(problems) == 1 and problems[0].startswith("bad.pt does not load")


def test_the_supervisor_names_the_resume_step_only_when_one_is_committed(tmp_path):
    assert ck.resume_env(tmp_path) == {ck.CHECKPOINT_DIR_ENV: str(tmp_path)}
    _commit(tmp_path, 6)
    env = ck.resume_env(tmp_path)
    assert env[ck.RESUME_STEP_ENV] == "6" and ck.step_of_env(env) == 6 and ck.step_of_env({}) is None


def test_a_resume_is_recorded_per_attempt_and_status_says_what_happened(tmp_path):
    ck.record_resume(tmp_path, "2", 6, "dscluster.checkpoint")
    ck.record_resume(None, "1", 6, "x")  # not a supervised run: nothing to record, no error
    got = ck.read_resume(tmp_path, 2)
    assert got["step"] == 6 and ck.read_resume(tmp_path, 3) is None
    assert "resumed from step-6 (dscluster.checkpoint)" in resume_note({"resume_step": 6, "resumed": got})
    plain = resume_note({"resume_step": 6, "resumed": None})
    assert "did not resume from the committed step-6" in plain and "load_latest" in plain
    assert resume_note({"n": 1, "resume_step": None, "resumed": None}) is None  # a first attempt: nothing to say
    scratch = resume_note({"n": 2, "resume_step": None, "resumed": None})  # a restart with nothing committed
    assert "started from scratch" in scratch and "dscluster.checkpoint.save(...)" in scratch
    assert "found no committed" in resume_note({"resume_step": 6, "resumed": {"step": None}})


def _stage0_step(tmp_path: Path, cfg: GPTConfig) -> tuple[Path, GPT]:
    """What DeepSpeed's save_checkpoint writes for ZeRO stage 0 (the whole module in one file), committed."""
    torch.manual_seed(0)
    model = GPT(cfg)
    step_dir = tmp_path / "ckpt" / "step-7"
    step_dir.mkdir(parents=True)
    torch.save({"module": {k: v.to(torch.bfloat16) if v.is_floating_point() else v
                           for k, v in model.state_dict().items()},
                "step": 7, "model": cfg.__dict__}, step_dir / "mp_rank_00_model_states.pt")
    ck.commit(step_dir.parent, 7, {"world_size": 1, "zero_stage": 0})
    return step_dir, model


def test_hf_export_is_sharded_with_an_index_and_loads_back_as_the_reference_gpt(tmp_path):
    cfg = GPTConfig(n_layer=2, n_head=2, d_model=32, vocab_size=100, seq_len=16)
    step_dir, model = _stage0_step(tmp_path, cfg)
    seen = []
    out = tmp_path / "hf"
    done = ex.export(step_dir, out, "hf", progress=lambda d, t: seen.append((d, t)), shard_bytes=20_000)
    files = sorted(p.name for p in out.iterdir())
    assert "config.json" in files and ex.INDEX_FILE in files and len([f for f in files if f.endswith(".safetensors")]) > 1
    assert seen[-1][0] == seen[-1][1] == done.bytes and len(seen) > 1
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "dscluster-gpt" and config["d_model"] == 32 and config["dscluster_step"] == 7
    loaded = ex.load_gpt(out)
    idx = torch.randint(0, 100, (1, 8))
    saved = {k: v.to(torch.bfloat16).float() for k, v in model.state_dict().items()}  # bf16, widened to fp32
    assert all(torch.equal(loaded.state_dict()[k], v) for k, v in saved.items())
    model.load_state_dict(saved)
    with torch.no_grad():
        assert torch.equal(loaded(idx), model.eval()(idx))
    assert not list(tmp_path.glob(".hf.partial-*"))
    with pytest.raises(ConfigError, match="never overwrites"):
        ex.export(step_dir, out, "hf")


def test_fp32_and_safetensors_exports_load_without_deepspeed(tmp_path):
    cfg = GPTConfig(n_layer=1, n_head=2, d_model=16, vocab_size=50, seq_len=8)
    step_dir, model = _stage0_step(tmp_path, cfg)
    pt = ex.export(step_dir, tmp_path / "m.pt", "fp32").path
    st = ex.export(step_dir, tmp_path / "st", "safetensors").path
    a, b = ex.load_state_dict(pt), ex.load_state_dict(st)
    assert set(a) == set(b) == set(model.state_dict())
    assert all(a[k].dtype == torch.float32 and torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(ConfigError, match="--format 'onnx'"):
        ex.export(step_dir, tmp_path / "x", "onnx")


def test_hf_export_of_a_step_without_a_gpt_config_is_refused_with_the_alternative(tmp_path):
    step_dir = tmp_path / "step-1"
    step_dir.mkdir()
    torch.save({"module": {"w": torch.ones(2)}, "step": 1}, step_dir / "mp_rank_00_model_states.pt")
    ck.commit(tmp_path, 1, {"world_size": 1, "zero_stage": 0})
    with pytest.raises(ConfigError, match="--format safetensors"):
        ex.export(step_dir, tmp_path / "hf", "hf")


def test_shared_tensors_are_stored_once_and_restored_as_aliases(tmp_path):
    w = torch.arange(6.0).view(2, 3)
    state = {"embed.weight": w, "head.weight": w, "b": torch.zeros(3)}
    out = tmp_path / "st"
    out.mkdir()
    ex._write_safetensors(state, out, lambda d, t: None, 1 << 20)
    back = ex.load_state_dict(out)
    assert set(back) == set(state) and torch.equal(back["head.weight"], w)


def test_ckpt_messages_have_zh_tw_translations():
    from dscluster.i18n import catalog

    cat = catalog("zh_TW")
    wanted = set()
    for path in (SRC / "checkpoint.py", SRC / "train" / "checkpoint.py", SRC / "train" / "commits.py",
                 SRC / "train" / "resumes.py", SRC / "train" / "async_save.py", SRC / "train" / "writeback.py",
                 SRC / "train" / "export.py", SRC / "commands" / "ckpt.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tr" and node.args and \
                    isinstance(node.args[0], ast.Constant):
                wanted.add(node.args[0].value)
    assert len(wanted) > 30
    assert not sorted(m for m in wanted if m not in cat)
