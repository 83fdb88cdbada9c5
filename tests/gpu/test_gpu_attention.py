"""FlashAttention-4 (train/attention.py, `--attention fa4`) on a real Hopper GPU: forward and gradients against
float32 SDPA, as close as SDPA's own bf16 kernels are, and inside the compiled model, where it runs as one
opaque op and the model's loss and gradients match the SDPA model's."""

from __future__ import annotations

import pytest
import torch

pytestmark = [pytest.mark.gpu]


def _fa4_ready() -> bool:
    from dscluster.train import attention

    return (torch.cuda.is_available() and torch.cuda.get_device_capability() >= attention.FA4_MIN_CAPABILITY
            and attention.fa4_installed())


fa4 = pytest.mark.skipif(not _fa4_ready(), reason="needs a Hopper GPU with flash-attn-4 (the fa4 extra)")


def _errors(fn, backend: str, shape):
    from dscluster.train import attention, perf

    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g, requires_grad=True) for _ in range(3))
    dy = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g)
    with perf.attention_backend(backend):
        y = fn(q, k, v)
        y.backward(dy)
    q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
    with perf.attention_backend("math"):
        y32 = attention.sdpa_attention(q32, k32, v32)
        y32.backward(dy.float())
    pairs = zip((y, q.grad, k.grad, v.grad), (y32, q32.grad, k32.grad, v32.grad))
    return [float((a.float() - b).norm() / b.norm()) for a, b in pairs]


@fa4
@pytest.mark.parametrize("shape", [(2, 2048, 16, 128), (1, 1000, 4, 128), (3, 256, 8, 64)])
def test_fa4_matches_float32_as_closely_as_sdpa_does(shape):
    from dscluster.train import attention

    got = _errors(attention.fa4_attention, "auto", shape)
    sdpa = _errors(attention.sdpa_attention, "auto", shape)
    for name, e, ref in zip(("out", "dq", "dk", "dv"), got, sdpa):
        assert e < max(2 * ref, 1e-2), (name, e, ref)


def _compiled_with_fa4_matches_the_sdpa_model(kernels: str, expected: str) -> None:
    """The compiled model with FA4 (and `kernels` swapped in first) against the plain SDPA model: loss and
    every gradient."""
    from dscluster.train import attention, perf
    from dscluster.train.model import GPT, GPTConfig

    torch.manual_seed(0)
    cfg = GPTConfig(n_layer=2, n_head=4, d_model=512, vocab_size=257, seq_len=512)
    base = GPT(cfg).cuda().to(torch.bfloat16)
    other = GPT(cfg).cuda().to(torch.bfloat16)
    other.load_state_dict(base.state_dict())
    perf.use_kernels(other, kernels, "cuda")
    assert attention.use_attention(other, "fa4", "cuda") == expected
    perf.compile_model(other, "blocks")
    x = torch.randint(0, 257, (4, cfg.seq_len + 1), device="cuda")
    losses = []
    for model in (base, other):
        loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        losses.append(float(loss))
    assert abs(losses[0] - losses[1]) < 2e-2 * abs(losses[0])
    for (name, p), q in zip(base.named_parameters(), other.parameters()):
        rel = float((p.grad.float() - q.grad.float()).norm() / p.grad.float().norm())
        assert rel < 5e-2, (name, rel)


@fa4
def test_compiled_model_with_fa4_matches_the_sdpa_model():
    _compiled_with_fa4_matches_the_sdpa_model("off", "flash-attn-4 in 2 layers")


@fa4
@pytest.mark.parametrize("shape", [(2, 2048, 16, 128), (1, 1000, 4, 64)])
def test_rotary_and_fa4_as_one_op_match_them_apart(shape):
    """The fused op (v read and dq, dk, dv written where the projection keeps them, dq and dk turned in
    place) computes what the rotary kernel and FA4 compute apart: the same kernels on the same values."""
    from dscluster.train import attention, kernels

    B, T, H, hd = shape
    g = torch.Generator(device="cuda").manual_seed(0)
    qkv = torch.randn(B, T, 3, H, hd, device="cuda", dtype=torch.bfloat16, generator=g)
    theta = torch.rand(T, hd // 2, device="cuda", generator=g) * 6
    dy = torch.randn(B, T, H, hd, device="cuda", dtype=torch.bfloat16, generator=g)
    results = []
    for fused in (True, False):
        x = qkv.clone().requires_grad_()
        if fused:
            y = attention.fa4_rotary_attention(x, theta.cos(), theta.sin())
        else:
            y = attention.fa4_attention(*kernels.rotary_qkv(x, theta.cos(), theta.sin()))
        y.backward(dy)
        results.append((y.float(), x.grad.float()))
    (y1, g1), (y2, g2) = results
    # dq is accumulated with atomics in FA4's backward: the order of its additions may differ
    assert float((y1 - y2).norm() / y2.norm()) < 1e-3 and float((g1 - g2).norm() / g2.norm()) < 1e-3


@fa4
def test_compiled_model_with_the_fused_op_matches_the_sdpa_model():
    _compiled_with_fa4_matches_the_sdpa_model("triton", "flash-attn-4 in 2 layers, with the rotary kernel as one op")
