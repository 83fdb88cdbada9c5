"""Causal attention alone, forward and forward + backward, at the trainer's shapes: SDPA's cuDNN and
FlashAttention-2 kernels against FlashAttention-4 (train/attention.py), each checked against a float32
reference first. Prints one JSON line per kernel.

    python3 benchmarks/attention_kernels.py [--batch 24] [--seq 2048] [--heads 16] [--head-dim 128]

TFLOP/s count the causal work actually done (half of the full T x T products): forward 2 GEMMs,
backward 5 (the recomputed scores included), 2 * B * H * T^2 * hd / 2 FLOPs each.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_metrics as gm  # noqa: E402

from dscluster.train import attention, perf  # noqa: E402


def kernels() -> dict:
    found = {"cudnn": attention.sdpa_attention, "flash2": attention.sdpa_attention}
    if attention.fa4_installed() and torch.cuda.get_device_capability() >= attention.FA4_MIN_CAPABILITY:
        found["fa4"] = attention.fa4_attention
    return found


def backend(name: str):
    return perf.attention_backend({"cudnn": "cudnn", "flash2": "flash"}.get(name, "auto"))


def error_vs_fp32(name: str, fn, B=2, T=1024, H=4, hd=128) -> dict:
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(B, T, H, hd, device="cuda", dtype=torch.bfloat16, generator=g, requires_grad=True)
               for _ in range(3))
    dy = torch.randn(B, T, H, hd, device="cuda", dtype=torch.bfloat16, generator=g)
    with backend(name):
        y = fn(q, k, v)
        y.backward(dy)
    got = [y.float(), q.grad.float(), k.grad.float(), v.grad.float()]
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    with perf.attention_backend("math"):
        y32 = attention.sdpa_attention(q32, k32, v32)
        y32.backward(dy.float())
    ref = [y32, q32.grad, k32.grad, v32.grad]
    return {n: float((a - b).norm() / b.norm()) for n, a, b in zip(("out", "dq", "dk", "dv"), got, ref)}


def measure(name: str, fn, B: int, T: int, H: int, hd: int, iters: int) -> dict:
    q, k, v = (torch.randn(B, T, H, hd, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    dy = torch.randn(B, T, H, hd, device="cuda", dtype=torch.bfloat16)
    t0 = time.perf_counter()
    with backend(name):
        fn(q, k, v).backward(dy)  # first call: cuDNN plans, FlashAttention-4's JIT compile
        torch.cuda.synchronize()
        first_s = time.perf_counter() - t0
        with torch.no_grad():
            fwd_ms = gm.cuda_ms(lambda: fn(q, k, v), iters, warmup=1)
        both_ms = gm.cuda_ms(lambda: fn(q, k, v).backward(dy), iters, warmup=1)
    gemm = 2.0 * B * H * T * T * hd / 2  # one causal T x T x hd product
    return {"bench": "attention", "kernel": name, "shape": [B, T, H, hd], "first_call_s": round(first_s, 2),
            "fwd_ms": round(fwd_ms, 3), "fwd_bwd_ms": round(both_ms, 3), "bwd_ms": round(both_ms - fwd_ms, 3),
            "fwd_tflops": round(2 * gemm / fwd_ms / 1e9, 1),
            "bwd_tflops": round(5 * gemm / (both_ms - fwd_ms) / 1e9, 1)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=24)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--iters", type=int, default=20)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    for name, fn in kernels().items():
        try:
            err = error_vs_fp32(name, fn)
            row = measure(name, fn, a.batch, a.seq, a.heads, a.head_dim, a.iters)
            row["rel_error_vs_fp32"] = {k: round(v, 5) for k, v in err.items()}
        except Exception as exc:  # noqa: BLE001 - one kernel failing must not hide the others' rows
            row = {"bench": "attention", "kernel": name, "error": f"{type(exc).__name__}: {exc}"[:600]}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
