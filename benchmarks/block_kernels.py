"""One compiled transformer block, forward + backward, in the variants the trainer could use: where the
non-GEMM time of a block goes and what each change buys. JSON lines out, one per variant.

    python benchmarks/block_kernels.py --preset 1.3b --mb 16 [--profile]

variants: layout = "bthd" (the model's: rotary in the projection's own (B, T, H, hd) layout and SDPA on
transposed views, so no element-wise kernel transposes, forward or backward) or "bhtd" (the earlier one:
q, k, v permuted to (B, H, T, hd), rotary there); silu_mul = "torch" (the model's: PyTorch's
expression, compiled by Inductor) or "triton" (the hand-written kernel, train/kernels.py); an optional
third part, norm = "torch" (default) or "triton": the block's two residual adds + RMSNorms as Inductor's
kernels or the hand-written one (train/norm_kernels.py), e.g. `--variants bthd/triton,bthd/triton/triton`.
The block is timed as a middle block of the model: it takes the residual stream and the previous block's
MLP output, and its backward gets a gradient for both of its outputs.

    python benchmarks/block_kernels.py --preset 1.3b --mb 24 --norm-only

times the residual add + RMSNorm alone, Inductor's (the compiled reference) against the hand-written
kernel, forward and backward, with the bandwidth each reaches: both passes move four (rows, d) tensors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_metrics as gm  # noqa: E402


def bhtd_attention_forward(self, x, rotary):
    """The earlier layout, kept to compare against: q, k, v permuted to (B, H, T, hd), rotary there."""
    B, T, C = x.shape
    q, k, v = self.qkv(x).view(B, T, 3, self.n_head, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)
    cos, sin = rotary.cos[:, :T].transpose(1, 2).to(x.dtype), rotary.sin[:, :T].transpose(1, 2).to(x.dtype)

    def rot(t):
        t1, t2 = t.chunk(2, dim=-1)
        return torch.cat((t1 * cos - t2 * sin, t2 * cos + t1 * sin), dim=-1)

    y = F.scaled_dot_product_attention(rot(q), rot(k), v, is_causal=True)
    return self.proj(y.transpose(1, 2).reshape(B, T, C))


def build_block(preset: str, layout: str, silu_mul: str, norm: str = "torch"):
    from dscluster.train import kernels, norm_kernels
    from dscluster.train.model import GPT, preset_config

    cfg = preset_config(preset, n_layer=1)
    gpt = GPT(cfg).to("cuda", torch.bfloat16)
    block = gpt.blocks[0]
    if layout == "bhtd":
        block.attn.forward = bhtd_attention_forward.__get__(block.attn)
    if silu_mul == "triton":
        block.mlp.silu_mul = kernels.silu_mul
    if norm == "triton":
        block.norm1.add_rms_norm = block.norm2.add_rms_norm = norm_kernels.add_rms_norm
    block.compile(dynamic=False)
    return block, gpt.rotary, cfg


def time_block(block, rotary, cfg, mb: int, iters: int) -> tuple[float, float]:
    x, branch, grads = _inputs(cfg, mb)

    def once():
        torch.autograd.backward(block(x, branch, rotary), grads)

    ms = gm.cuda_ms(once, iters, before=torch.cuda.reset_peak_memory_stats)
    return ms, torch.cuda.max_memory_allocated() / 2**30


def _inputs(cfg, mb: int):
    """The residual stream and the previous block's MLP output, and gradients for the block's two outputs."""
    def t(grad):
        return torch.randn(mb, cfg.seq_len, cfg.d_model, device="cuda", dtype=torch.bfloat16, requires_grad=grad)

    return t(True), t(True), [t(False), t(False)]


def kernel_table(block, rotary, cfg, mb: int, rows: int = 14) -> str:
    from torch.profiler import ProfilerActivity, profile

    x, branch, grads = _inputs(cfg, mb)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            torch.autograd.backward(block(x, branch, rotary), grads)
        torch.cuda.synchronize()
    return prof.key_averages().table(sort_by="cuda_time_total", row_limit=rows, max_name_column_width=70)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="1.3b")
    ap.add_argument("--mb", type=int, default=16)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--variants", default="bhtd/torch,bthd/torch,bhtd/triton,bthd/triton")
    ap.add_argument("--profile", action="store_true", help="also print each variant's top kernels")
    ap.add_argument("--check", action="store_true", help="compare the Triton SwiGLU with PyTorch's first")
    ap.add_argument("--norm-only", action="store_true", help="time the residual add + RMSNorm alone, then stop")
    args = ap.parse_args()
    if args.check:
        check_silu_mul()
    if args.norm_only:
        time_add_rms_norm(args.preset, args.mb, args.iters)
        return
    for variant in args.variants.split(","):
        layout, silu_mul, norm = (variant.split("/") + ["torch"])[:3]
        torch._dynamo.reset()
        block, rotary, cfg = build_block(args.preset, layout, silu_mul, norm)
        ms, peak = time_block(block, rotary, cfg, args.mb, args.iters)
        gm.emit({"bench": "block", "preset": args.preset, "mb": args.mb, "layout": layout, "silu_mul": silu_mul,
                 "norm": norm, "fwd_bwd_ms": round(ms, 3), "peak_mem_gib": round(peak, 2)}, None)
        if args.profile:
            print(kernel_table(block, rotary, cfg, args.mb), flush=True)
        del block
        torch.cuda.empty_cache()


def time_add_rms_norm(preset: str, mb: int, iters: int) -> None:
    """x + residual and its RMSNorm at the model's width, mb x seq_len rows, bf16: Inductor against the kernel."""
    from dscluster.train import norm_kernels
    from dscluster.train.model import preset_config

    cfg = preset_config(preset)
    rows, d = mb * cfg.seq_len, cfg.d_model
    x, r = (torch.randn(rows, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    w = torch.ones(d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    grads = [torch.randn_like(x) for _ in range(2)]
    tensor_bytes = rows * d * x.element_size()
    impls = (("inductor", torch.compile(norm_kernels.add_rms_norm_reference, dynamic=False)),
             ("triton", norm_kernels.add_rms_norm))
    for name, fn in impls:
        def forward(fn=fn):
            return fn(x, r, w, cfg.norm_eps)

        # autograd.grad: nothing accumulates into .grad, so the backward is the norm's alone
        fwd_ms = gm.cuda_ms(forward, iters)
        both_ms = gm.cuda_ms(lambda forward=forward: torch.autograd.grad(forward(), [x, r, w], grads), iters)
        bwd_ms = both_ms - fwd_ms
        gm.emit({"bench": "add_rms_norm", "impl": name, "preset": preset, "rows": rows, "d": d,
                 "fwd_ms": round(fwd_ms, 4), "bwd_ms": round(bwd_ms, 4),
                 "fwd_tb_s": round(4 * tensor_bytes / fwd_ms / 1e9, 2),
                 "bwd_tb_s": round(4 * tensor_bytes / bwd_ms / 1e9, 2)}, None)


def check_silu_mul() -> None:
    from dscluster.train import kernels

    torch.manual_seed(0)
    for shape in ((3, 5, 2 * 300), (4096, 2 * 5632)):
        gu = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        g = torch.randn(*shape[:-1], shape[-1] // 2, device="cuda", dtype=torch.bfloat16)
        ref_gu = gu.detach().float().requires_grad_()
        ref = kernels.silu_mul_reference(ref_gu, shape[-1] // 2)
        ref.backward(g.float())
        out = kernels.silu_mul(gu, shape[-1] // 2)
        out.backward(g)
        print(json.dumps({"check": "silu_mul", "shape": shape,
                          "out_max_err": float((out.float() - ref).abs().max()),
                          "grad_max_err": float((gu.grad.float() - ref_gu.grad).abs().max()),
                          "grad_scale": float(ref_gu.grad.abs().max())}), flush=True)


if __name__ == "__main__":
    main()
