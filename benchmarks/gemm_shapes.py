"""The twelve matrix products of one transformer block, each alone, laid out as autograd issues them
(forward y = x Wᵀ, input gradient dy W, weight gradient dyᵀ x): which of them runs below the rest.
JSON lines out, one per product, with the square 8192 product of the same run for scale. Given several
micro-batches (--mb 22,24,33), a summary line per micro-batch adds up the twelve: the block's matrix
products per token at each, where the row count M = micro-batch x seq sets how evenly the output tiles
fill the SMs.

    python benchmarks/gemm_shapes.py --preset 1.3b --mb 24
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_metrics as gm  # noqa: E402


def main() -> None:
    from dscluster.train.model import preset_config

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="1.3b")
    ap.add_argument("--mb", default="24", help="micro-batch, or several comma-separated")
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    cfg = preset_config(args.preset)
    d, h = cfg.d_model, cfg.hidden
    bf16 = dict(device="cuda", dtype=torch.bfloat16)
    a = torch.randn(8192, 8192, **bf16)
    ms = gm.cuda_ms(lambda a=a: torch.mm(a, a), args.iters)
    print(json.dumps({"bench": "gemm", "name": "square 8192", "ms": round(ms, 3),
                      "tflops": round(2 * 8192**3 / ms / 1e9, 1)}), flush=True)
    del a
    for mb in (int(v) for v in args.mb.split(",")):
        m, total_ms, total_flops = mb * cfg.seq_len, 0.0, 0
        for name, k, n in (("qkv", d, 3 * d), ("proj", d, d), ("gate_up", d, 2 * h), ("down", h, d)):
            x, w, dy = torch.randn(m, k, **bf16), torch.randn(n, k, **bf16), torch.randn(m, n, **bf16)
            flops = 2 * m * k * n
            for part, (p, q) in (("forward", (x, w.t())), ("input grad", (dy, w)), ("weight grad", (dy.t(), x))):
                ms = gm.cuda_ms(lambda p=p, q=q: torch.mm(p, q), args.iters)
                total_ms, total_flops = total_ms + ms, total_flops + flops
                print(json.dumps({"bench": "gemm", "name": f"{name} {part}", "mb": mb, "m": m, "k": k, "n": n,
                                  "ms": round(ms, 3), "tflops": round(flops / ms / 1e9, 1)}), flush=True)
            del x, w, dy
        print(json.dumps({"bench": "gemm_block", "mb": mb, "m": m, "ms": round(total_ms, 3),
                          "us_per_token": round(total_ms * 1e3 / m, 4),
                          "tflops": round(total_flops / total_ms / 1e9, 1)}), flush=True)


if __name__ == "__main__":
    main()
