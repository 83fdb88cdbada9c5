"""The hand-written SwiGLU and rotary kernels (train/kernels.py) and the fused residual add + RMSNorm
(train/norm_kernels.py) against PyTorch's expressions on a real GPU:
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
@pytest.mark.parametrize("shape,residual", [((4, 2048, 2048), True), ((3, 7, 96), True), ((5, 100), False)])
def test_add_rms_norm_matches_float64_and_its_weight_gradient_is_deterministic(shape, residual):
    from dscluster.train import norm_kernels as nk

    torch.manual_seed(0)
    d = shape[-1]
    x = torch.randn(*shape, device="cuda").to(torch.bfloat16).requires_grad_()
    r = torch.randn(*shape, device="cuda").to(torch.bfloat16).requires_grad_() if residual else None
    w = (1 + 0.3 * torch.randn(d, device="cuda")).to(torch.bfloat16).requires_grad_()
    grads = [torch.randn(*shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
    ref_in = [t.detach().double().requires_grad_() if t is not None else None for t in (x, r, w)]
    torch.autograd.backward(nk.add_rms_norm_reference(*ref_in, 1e-5), [g.double() for g in grads])
    s, out = nk.add_rms_norm(x, r, w, 1e-5)
    torch.autograd.backward([s, out], grads)
    ref_s, ref_out = nk.add_rms_norm_reference(*(t.detach() if t is not None else None for t in ref_in), 1e-5)

    def rel(a, b):
        return float((a.detach().double() - b).abs().max() / b.abs().max())

    assert s.dtype == out.dtype == torch.bfloat16 and (s is x) == (not residual)
    assert rel(s, ref_s) <= 2**-8 and rel(out, ref_out) <= 2**-7  # one rounding (two for the norm of a sum)
    pairs = [(x.grad, ref_in[0].grad), (w.grad, ref_in[2].grad)] + ([(r.grad, ref_in[1].grad)] if residual else [])
    assert all(rel(a, b) <= 2**-7 for a, b in pairs), [rel(a, b) for a, b in pairs]
    first = w.grad.clone()
    w.grad = None
    torch.autograd.backward(list(nk.add_rms_norm(x, r, w, 1e-5)), grads)
    assert torch.equal(w.grad, first)  # partial sums per program, no atomics: the same bits every run
    # the backward's grid is one wave, sized from the compiled kernel's registers (not the fixed fallback)
    assert nk._RESIDENT and all(measured for _sms, _per_sm, measured in nk._RESIDENT.values()), nk._RESIDENT


@cuda
def test_compiled_model_with_kernel_is_as_exact_as_the_plain_model():
    """Against a float64 copy of the model: each parameter's gradient error in the compiled model with the
    kernels within that of the plain bf16 model (tests/kernel_grads.py says why not element by element)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import kernel_grads

    report = kernel_grads.gradient_errors("cuda")
    worst = {name: max(m["errors"].values()) for name, m in report["models"].items()}
    assert not kernel_grads.verdict(report), (kernel_grads.verdict(report), worst)
    assert abs(report["models"]["compiled+kernel"]["loss"] - report["loss_fp64"]) < 1e-2
    assert abs(report["models"]["compiled+norm"]["loss"] - report["loss_fp64"]) < 1e-2
