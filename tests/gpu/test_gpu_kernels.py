"""The hand-written SwiGLU kernel (train/kernels.py) against PyTorch's expression on a real GPU: values
and gradients, odd shapes (a hidden size that is not a multiple of the block), and inside a compiled
block, where it must run as one opaque op and give the same loss and gradients as the plain model."""

from __future__ import annotations

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
def test_compiled_model_with_kernel_matches_plain_model():
    from dscluster.train import perf
    from dscluster.train.model import GPT, preset_config

    torch.manual_seed(0)
    cfg = preset_config("tiny", n_layer=2, d_model=256, n_head=4, seq_len=256)
    plain = GPT(cfg).to("cuda")
    fast = GPT(cfg).to("cuda")
    fast.load_state_dict(plain.state_dict())
    assert perf.use_kernels(fast, "triton", "cuda") == "silu_mul"
    perf.compile_model(fast, "blocks")
    x = torch.randint(0, cfg.vocab_size, (4, cfg.seq_len + 1), device="cuda")
    losses = []
    for model in (plain, fast):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        losses.append(loss.item())
    assert abs(losses[0] - losses[1]) < 1e-2
    for (name, p), q in zip(plain.named_parameters(), fast.parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=5e-2, atol=5e-3 * p.grad.abs().max().item()), name
