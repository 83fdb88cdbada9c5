"""The hand-written SwiGLU kernel (train/kernels.py) against PyTorch's expression on a real GPU: values
and gradients, odd shapes (a hidden size that is not a multiple of the block), and inside a compiled
block, where it must run as one opaque op and give the same loss and gradients as the plain model."""

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
def test_compiled_model_with_kernel_is_as_exact_as_the_plain_model():
    """Against a float64 copy of the model: each parameter's gradient error in the compiled model with the
    kernel within that of the plain bf16 model (tests/kernel_grads.py says why not element by element)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import kernel_grads

    report = kernel_grads.gradient_errors("cuda")
    worst = {name: max(m["errors"].values()) for name, m in report["models"].items()}
    assert not kernel_grads.verdict(report), (kernel_grads.verdict(report), worst)
    assert abs(report["models"]["compiled+kernel"]["loss"] - report["loss_fp64"]) < 1e-2
