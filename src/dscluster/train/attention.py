"""Attention kernels of the reference GPT, in the QKV projection's own (B, T, H, hd) layout.

- `sdpa_attention`: PyTorch's scaled_dot_product_attention (cuDNN or FlashAttention-2 on H100/H200,
  chosen by `--attention auto|cudnn|flash|...` around the step); SDPA wants (B, H, T, hd), so it gets
  transposed views and its output is transposed back (views, no copies).
- `fa4_attention`: FlashAttention-4 (PyPI `flash-attn-4`, its CuTe-DSL kernels for Hopper and Blackwell:
  the `fa4` extra), `--attention fa4`, and what `--attention auto` runs where it can (`auto_picks_fa4`). Its native layout is the projection's, so nothing is transposed.
  Wrapped as a custom op with a fake and an autograd formula, so the compiled blocks call it as one
  opaque op (Dynamo does not trace into the CuTe-DSL launcher) and its backward is FlashAttention-4's own.

`refusal` is pure, as fp8.refusal: FA4 is refused on CPU, on GPUs before Hopper and without the package,
each time naming the setting and the fix, before anything is built.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from dscluster.errors import ConfigError
from dscluster.train import hopper, kernels
from dscluster.train.kernels import unit_last

# FlashAttention-4's kernels: Hopper (9.0) and Blackwell (10.x, 12.x); its sm80 path is not its point.
FA4_MIN_CAPABILITY = hopper.HOPPER
FA4_MODULE = "flash_attn.cute"


def sdpa_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention of (B, T, H, hd) tensors through SDPA; returns (B, T, H, hd)."""
    y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    return y.transpose(1, 2)


def fa4_installed() -> bool:
    return hopper.installed(FA4_MODULE)


FA4 = hopper.HopperKernel(choice="--attention fa4", setting="--attention", package="FlashAttention-4",
                          module=FA4_MODULE, pip="flash-attn-4", auto="--attention auto",
                          older_fix="use --attention auto (cuDNN or FlashAttention-2)")


def refusal(device_type: str, capability: tuple[int, int] | None, installed: bool) -> ConfigError | None:
    """Why `--attention fa4` cannot run here, or None."""
    return hopper.refusal(FA4, device_type, capability, installed)


def _interface():
    from flash_attn.cute import interface  # noqa: PLC0415

    return interface


@torch.library.custom_op("dscluster::fa4_attention", mutates_args=())
def fa4_attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Causal FlashAttention-4 forward: (out (B, T, H, hd), lse (B, H, T) fp32)."""
    result = _interface()._flash_attn_fwd(q, k, v, causal=True, return_lse=True)
    return result[0], result[1]


@fa4_attention_op.register_fake
def _(q, k, v):
    B, T, H, _hd = q.shape
    return torch.empty_like(q), q.new_empty((B, H, T), dtype=torch.float32)


@torch.library.custom_op("dscluster::fa4_attention_backward", mutates_args=())
def fa4_attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
                           grad_out: torch.Tensor, lse: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dq, dk, dv = _interface()._flash_attn_bwd(q, k, v, out, grad_out.contiguous(), lse, causal=True)[:3]
    return dq, dk, dv


@fa4_attention_backward.register_fake
def _(q, k, v, out, grad_out, lse):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _setup_context(ctx, inputs, output):
    q, k, v = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)


def _backward(ctx, grad_out, _grad_lse):
    q, k, v, out, lse = ctx.saved_tensors
    return fa4_attention_backward(q, k, v, out, grad_out, lse)


fa4_attention_op.register_autograd(_backward, setup_context=_setup_context)


# ---- rotary and FlashAttention-4 as one op, on the QKV projection's output --------------------------------
# Apart, the rotary kernel writes q and k rotated and a copy of v, and its backward copies FA4's dv into the
# projection's gradient beside the rotated dq and dk: v and dv each make one extra pass over memory per
# layer (2 x 201 MB per layer at micro-batch 24 x 2048 of the 1.3B model). Together, FA4 reads v where the
# projection wrote it, writes dq, dk and dv straight into the projection's (B, T, 3, H, hd) gradient (FA4
# takes strided tensors and output buffers), and the rotary backward turns dq and dk there, in place. The
# cost: the projection's output stays alive until backward instead of a copy of v (one third more of it).


@torch.library.custom_op("dscluster::fa4_rotary_attention", mutates_args=())
def fa4_rotary_attention_op(qkv: torch.Tensor, cos: torch.Tensor,
                            sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """qkv (B, T, 3, H, hd), cos and sin (T, hd/2) -> (out (B, T, H, hd), lse (B, H, T) fp32, q and k rotated
    (B, T, 2, H, hd), kept for the backward)."""
    qkv = unit_last(qkv)
    cos, sin = cos.float().contiguous(), sin.float().contiguous()
    B, T, _three, H, hd = qkv.shape
    qk = qkv.new_empty(B, T, 2, H, hd)
    kernels.rotate_qk(qkv, qk, cos, sin, 1)
    result = _interface()._flash_attn_fwd(qk[:, :, 0], qk[:, :, 1], qkv[:, :, 2], causal=True, return_lse=True)
    return result[0], result[1], qk


@fa4_rotary_attention_op.register_fake
def _(qkv, cos, sin):
    B, T, _three, H, hd = qkv.shape
    return qkv.new_empty(B, T, H, hd), qkv.new_empty((B, H, T), dtype=torch.float32), qkv.new_empty(B, T, 2, H, hd)


@torch.library.custom_op("dscluster::fa4_rotary_attention_backward", mutates_args=())
def fa4_rotary_attention_backward(qk: torch.Tensor, qkv: torch.Tensor, out: torch.Tensor, grad_out: torch.Tensor,
                                  lse: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """The gradient of the QKV projection's output (B, T, 3, H, hd), written once."""
    qkv = unit_last(qkv)
    grad_qkv = qkv.new_empty(qkv.shape)
    _interface()._flash_attn_bwd(qk[:, :, 0], qk[:, :, 1], qkv[:, :, 2], out, grad_out.contiguous(), lse,
                                 causal=True, dq=grad_qkv[:, :, 0], dk=grad_qkv[:, :, 1], dv=grad_qkv[:, :, 2])
    kernels.rotate_qk(grad_qkv, grad_qkv, cos.float().contiguous(), sin.float().contiguous(), -1)
    return grad_qkv


@fa4_rotary_attention_backward.register_fake
def _(qk, qkv, out, grad_out, lse, cos, sin):
    return qkv.new_empty(qkv.shape)


def _rotary_setup_context(ctx, inputs, output):
    qkv, cos, sin = inputs
    out, lse, qk = output
    ctx.save_for_backward(qk, qkv, out, lse, cos, sin)


def _rotary_backward(ctx, grad_out, _grad_lse, _grad_qk):
    qk, qkv, out, lse, cos, sin = ctx.saved_tensors
    return fa4_rotary_attention_backward(qk, qkv, out, grad_out, lse, cos, sin), None, None


fa4_rotary_attention_op.register_autograd(_rotary_backward, setup_context=_rotary_setup_context)


def fa4_rotary_attention(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary (the hand-written kernel) then causal FlashAttention-4 on the QKV projection's output
    (B, T, 3, H, hd); returns (B, T, H, hd). What the model runs when both are swapped in."""
    return fa4_rotary_attention_op(qkv, cos, sin)[0]


def fa4_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention of (B, T, H, hd) tensors through FlashAttention-4; returns (B, T, H, hd)."""
    return fa4_attention_op(unit_last(q), unit_last(k), unit_last(v))[0]


def _refusal_here(device_type: str) -> ConfigError | None:
    """`refusal` for this process: its GPU's compute capability, whether the package is installed."""
    return refusal(device_type, *hopper.here(FA4, device_type))


def check(device_type: str) -> None:
    """Raise `refusal`'s error for this process (the trainer calls it before any process group)."""
    refused = _refusal_here(device_type)
    if refused:
        raise refused


def auto_picks_fa4(device_type: str) -> bool:
    """`--attention auto` runs FlashAttention-4 where it can run (installed, Hopper or newer): measured on an
    H200 at 1.3B (benchmarks/RESULTS.md), its backward 11% faster than cuDNN's and the trainer 1.2% faster,
    with the same error against float32. Elsewhere auto is PyTorch's choice of SDPA kernel."""
    return _refusal_here(device_type) is None


def use_attention(model: nn.Module, name: str, device_type: str) -> str:
    """Swap FlashAttention-4 into every attention layer for `--attention fa4` (refused with a ConfigError
    where it cannot run) and for `auto` where it can run; other names keep SDPA, whose kernel family
    `perf.attention_backend` picks around the step. Returns what runs, for the log. Before compile_model,
    as use_kernels."""
    if name == "auto" and auto_picks_fa4(device_type):
        return swap_attention(model, fa4_attention) + " (auto)"
    if name != "fa4":
        return f"sdpa ({name})"
    check(device_type)
    return swap_attention(model, fa4_attention)


def swap_attention(model: nn.Module, attend) -> str:
    """Swap `attend` into every attention layer. A layer whose rotary is the hand-written kernel
    (perf.use_kernels, which runs first) and which gets FlashAttention-4 runs the two as one op
    (`fa4_rotary_attention`); `attend_qkv = None` takes them apart again."""
    owners = [m for m in model.modules() if hasattr(m, "attend")]
    fused = 0
    for m in owners:
        m.attend = attend
        if attend is fa4_attention and getattr(m, "rotary_qkv", None) is kernels.rotary_qkv:
            m.attend_qkv = fa4_rotary_attention
            fused += 1
    if not owners:
        return "sdpa (no attention layers)"
    return f"flash-attn-4 in {len(owners)} layers" + (", with the rotary kernel as one op" if fused else "")
