"""The SwiGLU MLP of one block alone, forward and forward + backward, at the trainer's shapes: cuBLAS with
the hand-written SwiGLU kernel (what `--kernels triton` runs) against QuACK's GEMMs with SwiGLU in their
epilogues (`--kernels quack`, train/mlp_kernels.py): its forward with each backward (mlp_kernels.BACKWARD)
at QuACK's default tiles, and all QuACK autotuned; each with its error against float32. JSON lines out, one per variant.

    python benchmarks/mlp_kernels.py --preset 1.3b --mb 24
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
    from dscluster.train import kernels, mlp_kernels
    from dscluster.train.model import SwiGLU, preset_config

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="1.3b")
    ap.add_argument("--mb", type=int, default=24)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--tuned", type=int, default=1, help="also QuACK's autotuned configuration (compiles them all)")
    args = ap.parse_args()
    cfg = preset_config(args.preset)
    m, d, h = args.mb * cfg.seq_len, cfg.d_model, cfg.hidden
    torch.manual_seed(0)
    mlp = SwiGLU(cfg).cuda().to(torch.bfloat16)
    x = torch.randn(m, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    dy = torch.randn(m, d, device="cuda", dtype=torch.bfloat16)
    params = (x, mlp.gate_up.weight, mlp.down.weight)

    with torch.no_grad():  # float32 reference, on a slice of rows (the weight gradients sum over all rows)
        rows = slice(0, 4096)
        gu = x[rows].float() @ mlp.gate_up.weight.float().T
        ref_out = kernels.silu_mul_reference(gu, h) @ mlp.down.weight.float().T
    flops = 3 * 2 * m * d * 3 * h  # three products forward (gate, up, down), twice that backward

    def variant(name, setup):
        setup()
        fwd = lambda: mlp(x)  # noqa: E731
        out = fwd()
        grads = torch.autograd.grad(out, params, dy)
        err = ((out[rows].float() - ref_out).abs().max() / ref_out.abs().max()).item()
        ms_f = gm.cuda_ms(lambda: fwd(), args.iters)
        ms_fb = gm.cuda_ms(lambda: torch.autograd.grad(fwd(), params, dy), args.iters)
        print(json.dumps({"bench": "mlp", "name": name, "m": m, "d": d, "hidden": h, "fwd_ms": round(ms_f, 3),
                          "fwd_bwd_ms": round(ms_fb, 3), "tflops": round(flops / ms_fb / 1e9, 1),
                          "out_err": f"{err:.2e}"}), flush=True)
        return grads

    def triton():
        mlp.mlp_op, mlp.silu_mul = None, kernels.silu_mul

    def quack(tuned, backward):
        def setup():
            mlp_kernels.TUNED, mlp_kernels.BACKWARD = tuned, backward
            mlp.mlp_op = mlp_kernels.swiglu_mlp
        return setup

    base = variant("cuBLAS + the SwiGLU kernel", triton)
    cases = [("QuACK forward, cuBLAS backward", False, "cublas"), ("QuACK, default tiles", False, "quack"),
             ("QuACK, its first backward product, then cuBLAS", False, "mixed")]
    cases += [("QuACK, autotuned", True, "quack")] * bool(args.tuned)
    for name, tuned, backward in cases:
        grads = variant(name, quack(tuned, backward))
        diff = [((g.float() - b.float()).abs().max() / b.float().abs().max()).item() for g, b in zip(grads, base)]
        print(json.dumps({"bench": "mlp", "name": name, "grad_vs_cublas": [f"{v:.2e}" for v in diff]}), flush=True)


if __name__ == "__main__":
    main()
