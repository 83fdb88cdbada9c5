"""The reference trainer on a real GPU (device machine only; skipped where no CUDA GPU exists).

The real trainer entry point with bf16, compiled blocks, fused AdamW and the prefetching data
loader trains the tiny preset and the loss falls; MFU is reported; the micro-batch search returns a
size that really fits; the benchmark's trainer case reports its figures. No speed is asserted here:
speed targets live in benchmarks/gpu_throughput.py and benchmarks/RESULTS.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import free_port

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One prepared corpus for the module (preparing it is the slow part); reuses $DSCLUSTER_SHARED's."""
    existing = os.environ.get("DSCLUSTER_SHARED")
    return Path(existing) if existing else tmp_path_factory.mktemp("shared")


def _train(tmp_path: Path, shared: Path, *extra: str, output: list | None = None) -> list[dict]:
    env = {**os.environ, "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": str(free_port()), "DSCLUSTER_SHARED": str(shared),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    run_dir = tmp_path / "run"
    argv = [sys.executable, "-m", "dscluster.train", "--preset", "tiny", "--steps", "60", "--log-interval", "20",
            "--eval-interval", "0", "--sample-tokens", "16", "--run-dir", str(run_dir), *extra]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    if output is not None:
        output.append(proc.stdout + proc.stderr)
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]


def test_trainer_bf16_compiled_checkpointed_loss_falls_and_reports_mfu(tmp_path, shared):
    lines = _train(tmp_path, shared, "--compile", "blocks", "--activation-checkpointing")
    steps = [r for r in lines if "tokens_per_s" in r]
    assert [r["step"] for r in steps] == [20, 40, 60]
    assert steps[-1]["loss"] < steps[0]["loss"] - 0.3, steps
    # The tiny model's MFU rounds to 0.0000 (4 decimals): the fields are there, sane, and per window.
    assert all(0 <= r["mfu"] < 1 and r["tflops"] >= 0 and r["tokens_per_s"] > 0 for r in steps), steps
    assert lines[-1]["event"] == "done"


@pytest.mark.skipif(not __import__("importlib").util.find_spec("torchao"), reason="needs torchao (the fp8 extra)")
def test_trainer_fp8_converts_every_linear_layer_and_the_loss_falls(tmp_path, shared):
    out: list[str] = []
    lines = _train(tmp_path, shared, "--compile", "blocks", "--precision", "fp8", output=out)
    assert "precision: fp8 (torchao float8, tensorwise scales) in 16 linear layers" in out[0], out[0][-2000:]
    steps = [r for r in lines if "tokens_per_s" in r]
    assert steps[-1]["loss"] < steps[0]["loss"] - 0.3, steps


def test_micro_batch_search_returns_a_size_that_fits():
    import torch

    from dscluster.train.model import GPT, preset_config
    from dscluster.train.perf import find_micro_batch

    cfg = preset_config("124m", seq_len=1024, vocab_size=257)
    model = GPT(cfg)
    device = torch.device("cuda", 0)
    mb = find_micro_batch(model, cfg.seq_len, cfg.vocab_size, device, upper=24)
    assert 1 <= mb <= 24
    trial = model.to(device=device, dtype=torch.bfloat16)
    x = torch.randint(0, cfg.vocab_size, (mb, cfg.seq_len + 1), device=device)
    trial(x[:, :-1], x[:, 1:]).backward()  # the size it chose really runs
    torch.cuda.synchronize()
