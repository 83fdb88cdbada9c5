"""The plain baseline: the script a user of the classic recipe would write.

Hugging Face GPT2LMHeadModel (its default attention, SDPA), DeepSpeed with bf16, ZeRO, the optimizer
from the ds_config, synthetic tokens already on the GPU (so the figure is the model + engine alone).
No torch.compile, no fusing, no tuning: that is the point of a baseline.

    python benchmarks/hf_baseline.py --preset 1.3b --seq-len 2048 --micro-batch 8
    deepspeed --num_gpus 2 benchmarks/hf_baseline.py --preset 1.3b --zero-stage 2

Prints one JSON line (rank 0) with tokens/s, TFLOP/s, MFU, peak memory and the config used.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_metrics as gm  # noqa: E402

# GPT-2 / GPT-3 shapes of the trainer's presets (n_layer, d_model, n_head); the trainer's own table
# wins when it is importable, so "same size" stays true if its presets change.
FALLBACK_SHAPES = {"124m": (12, 768, 12), "350m": (24, 1024, 16), "760m": (24, 1536, 16),
                   "1.3b": (24, 2048, 16), "2.7b": (32, 2560, 32)}


def preset_shape(name: str) -> tuple[int, int, int]:
    try:
        from dscluster.train.model import PRESETS  # type: ignore[attr-defined]

        p = PRESETS[name]
        get = (lambda k: p[k]) if isinstance(p, dict) else (lambda k: getattr(p, k))
        return get("n_layer"), get("d_model"), get("n_head")
    except Exception:  # noqa: BLE001 - the baseline must run without the trainer importable
        return FALLBACK_SHAPES[name]


def baseline_ds_config(micro_batch: int, zero_stage: int, grad_accum: int = 1) -> dict:
    """What the recipe's user writes: bf16 on, ZeRO on, AdamW from the config."""
    return {
        "train_micro_batch_size_per_gpu": micro_batch,
        "gradient_accumulation_steps": grad_accum,
        "bf16": {"enabled": True},
        "zero_optimization": {"stage": zero_stage},
        "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "betas": [0.9, 0.95], "weight_decay": 0.1}},
        "gradient_clipping": 1.0,
        "steps_per_print": 10**9,
    }


def run(preset: str, seq_len: int, micro_batch: int, zero_stage: int, steps: int, warmup: int,
        vocab_size: int, out: str | None = None, grad_accum: int = 1) -> dict:
    """`steps` optimizer steps of `grad_accum` micro-batches each are timed, after `warmup` steps."""
    gm.ensure_single_process_env()
    import deepspeed
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    n_layer, d_model, n_head = preset_shape(preset)
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(local_rank)
    torch.manual_seed(0)
    config = GPT2Config(n_layer=n_layer, n_embd=d_model, n_head=n_head, n_positions=seq_len,
                        vocab_size=vocab_size, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(config)
    n_matmul = gm.matmul_params(model)
    ds_config = baseline_ds_config(micro_batch, zero_stage, grad_accum)
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds_config)
    world = engine.world_size if hasattr(engine, "world_size") else int(os.environ.get("WORLD_SIZE", "1"))
    batches = [torch.randint(0, vocab_size, (micro_batch, seq_len), device=engine.device) for _ in range(4)]

    def step(i: int) -> torch.Tensor:
        for m in range(grad_accum):
            x = batches[(i * grad_accum + m) % len(batches)]
            loss = engine(input_ids=x, labels=x).loss
            engine.backward(loss)
            engine.step()
        return loss

    for i in range(warmup):
        step(i)
    gm.sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for i in range(steps):
        loss = step(i)
        if (i + 1) % 10 == 0:  # the user's `print(loss.item())` every few steps
            loss.item()
    gm.sync()
    elapsed = time.perf_counter() - t0
    tokens = steps * grad_accum * micro_batch * seq_len * world
    rec = {"bench": "hf_baseline", "preset": preset, "world_size": world, "seq_len": seq_len,
           "micro_batch": micro_batch, "grad_accum": grad_accum, "zero_stage": zero_stage, "params_matmul": n_matmul,
           **gm.throughput_fields(tokens, elapsed, gm.flops_per_token(n_matmul, n_layer, d_model, seq_len), world),
           "step_s": round(elapsed / steps, 4), "loss": round(float(loss.item()), 4),
           "peak_mem_gib": gm.peak_mem_gib(),
           "config": {"model": f"transformers GPT2LMHeadModel ({config._attn_implementation})",
                      "n_layer": n_layer, "d_model": d_model, "n_head": n_head, "vocab_size": vocab_size,
                      "ds_config": ds_config, "steps": steps, "warmup": warmup}}
    if gm.rank() == 0:
        gm.emit(rec, out)
    engine.destroy() if hasattr(engine, "destroy") else None
    engine = model = batches = None  # free the GPU memory before the next case in this process
    if cuda:
        torch.cuda.empty_cache()
    return rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="1.3b", choices=sorted(FALLBACK_SHAPES))
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--zero-stage", type=int, default=1)
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--vocab-size", type=int, default=50304)
    ap.add_argument("--out", default=None, help="also append the JSON line to this file")
    ap.add_argument("--local_rank", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    run(a.preset, a.seq_len, a.micro_batch, a.zero_stage, a.steps, a.warmup, a.vocab_size, a.out, a.grad_accum)
    return 0


if __name__ == "__main__":
    sys.exit(main())
