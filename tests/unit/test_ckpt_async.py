"""Asynchronous save at unit level: a fake engine that saves through DeepSpeed's checkpoint-engine
interface (engine.checkpoint_engine.save(state, path)), as DeepSpeed's save_checkpoint does."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from dscluster.errors import ConfigError
from dscluster.train import checkpoint as ck


class TorchEngine:
    def save(self, state, path):
        torch.save(state, path)


class FakeEngine:
    device = torch.device("cpu")

    def __init__(self):
        self.checkpoint_engine = TorchEngine()
        self.module = torch.nn.Linear(4, 4)
        self.flat = torch.arange(12.0)

    def zero_optimization_stage(self):
        return 1

    def save_checkpoint(self, save_dir, tag, client_state, save_latest):
        d = Path(save_dir) / tag
        d.mkdir(parents=True, exist_ok=True)
        self.checkpoint_engine.save({"module": {"w": self.flat[:6].view(2, 3)}, **client_state},
                                    str(d / "mp_rank_00_model_states.pt"))
        self.checkpoint_engine.save({"flat": self.flat, "part": self.flat[6:]}, str(d / "zero_pp_rank_0_mp_rank_00_optim_states.pt"))


def test_async_save_writes_the_state_as_it_was_when_save_returned_and_commits(tmp_path):
    engine = FakeEngine()
    ck.save(engine, tmp_path, 3, rank=0, world_size=1, zero_stage=1, keep=0, client_state={"step": 3},
            barrier=lambda: None, mode="async")
    engine.flat.add_(100)  # training goes on and changes the state in place
    assert ck.pending_step() == 3
    assert ck.wait_pending() == 3 and ck.pending_step() is None
    step_dir = tmp_path / "step-3"
    optim = torch.load(step_dir / "zero_pp_rank_0_mp_rank_00_optim_states.pt", weights_only=True)
    assert torch.equal(optim["flat"], torch.arange(12.0))
    assert optim["part"].untyped_storage().data_ptr() == optim["flat"].untyped_storage().data_ptr()  # one storage
    assert ck.latest_committed(tmp_path) == 3 and (tmp_path / "latest").read_text() == "step-3"
    assert ck.verify(step_dir) == [] and not list(step_dir.glob(ck.WRITTEN_PREFIX + "*"))
    assert engine.checkpoint_engine.__class__ is TorchEngine  # DeepSpeed's engine is given back


def test_a_crash_while_writing_in_the_background_leaves_the_previous_step_latest(tmp_path):
    script = textwrap.dedent(f"""
        import sys; sys.path[:0] = {sys.path!r}
        from pathlib import Path
        from tests_fake import FakeEngine
        from dscluster.train import checkpoint as ck
        d = Path({str(tmp_path)!r})
        e = FakeEngine()
        ck.save(e, d, 2, rank=0, world_size=1, zero_stage=1, keep=0, client_state={{}}, barrier=lambda: None)
        ck.save(e, d, 4, rank=0, world_size=1, zero_stage=1, keep=0, client_state={{}}, barrier=lambda: None,
                mode="async", crash_in_save=True)
        ck.wait_pending()
        print("not reached")
    """)
    (tmp_path / "tests_fake.py").write_text(Path(__file__).read_text())
    res = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 17, res.stdout + res.stderr
    assert "crashing while writing step-4" in res.stdout and "not reached" not in res.stdout
    assert ck.committed_steps(tmp_path) == [2] and (tmp_path / "latest").read_text() == "step-2"
    assert (tmp_path / "step-4").is_dir() and ck.resolve_resume(tmp_path, "auto") == 2


def test_host_memory_is_checked_before_an_async_save():
    assert ck.async_refusal(10 << 30, 8, 64 << 30) is not None  # 8 ranks x 10 GiB x 1.5 > 64 GiB
    why = ck.async_refusal(10 << 30, 8, 64 << 30)
    assert "120.0 GiB" in why and "64.0 GiB" in why and "synchronously" in why
    assert ck.async_refusal(1 << 30, 8, 64 << 30) is None
    assert ck.async_refusal(1 << 40, 1, None) is None  # unknown (no /proc/meminfo): try


def test_an_unknown_mode_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="--checkpoint-mode 'fast'"):
        ck.save(FakeEngine(), tmp_path, 1, rank=0, world_size=1, zero_stage=1, keep=0, client_state={},
                barrier=lambda: None, mode="fast")
