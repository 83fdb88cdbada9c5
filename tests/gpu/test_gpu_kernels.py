"""The hand-written SwiGLU and rotary kernels (train/kernels.py) against PyTorch's expressions on a real GPU:
values and gradients, odd shapes (sizes that are not a multiple of the block), and inside the compiled
model, where they run as opaque ops and must be as exact as the plain model (against float64)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.gpu]

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU (runs on the device machine)")


@cuda
@pytest.mark.parametrize("shape", [(3, 5, 2 * 300), (2, 4096, 2 * 1408), (7, 2 * 1024)])
def test_silu_mul_matches_pytorch_in_fp32(shape):
    from dscluster.train import kernels

    torch.manual_seed(0)
    hidden = shape[-1] // 2
    gu = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(*shape[:-1], hidden, device="cuda", dtype=torch.bfloat16)
    ref_gu = gu.detach().float().requires_grad_()
    ref = kernels.silu_mul_reference(ref_gu, hidden)
    ref.backward(grad.float())
    out = kernels.silu_mul(gu, hidden)
    out.backward(grad)
    assert out.shape == ref.shape and out.dtype == torch.bfloat16
    # One rounding to bf16 (8 bits of mantissa): relative error below 2^-8 of the largest value.
    assert (out.float() - ref).abs().max() <= ref.abs().max() * 2**-7
    assert (gu.grad.float() - ref_gu.grad).abs().max() <= ref_gu.grad.abs().max() * 2**-7


@cuda
@pytest.mark.parametrize("shape", [(2, 2048, 16, 128), (3, 7, 9, 128), (2, 5, 4, 16)])
def test_rotary_qkv_matches_float64(shape):
    from dscluster.train import kernels

    torch.manual_seed(0)
    B, T, H, hd = shape
    qkv = torch.randn(B, T, 3, H, hd, device="cuda").to(torch.bfloat16)
    theta = torch.randn(T, hd // 2, device="cuda", dtype=torch.float64)
    grads = [torch.randn(B, T, H, hd, device="cuda").to(torch.bfloat16) for _ in range(3)]
    ref_in = qkv.double().requires_grad_()
    ref = kernels.rotary_qkv_reference(ref_in, theta.cos(), theta.sin())
    torch.autograd.backward(ref, [g.double() for g in grads])
    x = qkv.clone().requires_grad_()
    out = kernels.rotary_qkv(x, theta.cos().float(), theta.sin().float())
    torch.autograd.backward(out, [g.transpose(1, 2).contiguous().transpose(1, 2) for g in grads])
    for o, r in zip(out, ref):
        assert o.dtype == torch.bfloat16 and o.is_contiguous() and o.shape == r.shape
        assert (o.double() - r).abs().max() <= r.abs().max() * 2**-8  # one rounding to bf16
    assert (x.grad.double() - ref_in.grad).abs().max() <= ref_in.grad.abs().max() * 2**-8
    assert torch.equal(out[2], qkv[:, :, 2])


@cuda
def test_compiled_model_with_kernel_is_as_exact_as_the_plain_model():
    """Against a float64 copy of the model: each parameter's gradient error in the compiled model with the
    kernel within that of the plain bf16 model (tests/kernel_grads.py says why not element by element)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import kernel_grads

    report = kernel_grads.gradient_errors("cuda")
    worst = {name: max(m["errors"].values()) for name, m in report["models"].items()}
    assert not kernel_grads.verdict(report), (kernel_grads.verdict(report), worst)
    assert abs(report["models"]["compiled+kernel"]["loss"] - report["loss_fp64"]) < 1e-2
