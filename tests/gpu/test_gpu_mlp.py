"""The SwiGLU MLP with SwiGLU in its matrix products' epilogues (train/mlp_kernels.py, `--kernels quack`:
QuACK's GEMMs) on a real Hopper GPU: output and the three gradients against float64, as close as cuBLAS
with the SwiGLU kernel gets (with either backward), and inside the compiled model, as exact as the plain
model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

pytestmark = [pytest.mark.gpu]


def _quack_ready() -> bool:
    from dscluster.train import mlp_kernels

    return (torch.cuda.is_available() and torch.cuda.get_device_capability() >= mlp_kernels.QUACK_MIN_CAPABILITY
            and mlp_kernels.quack_installed())


quack = pytest.mark.skipif(not _quack_ready(), reason="needs a Hopper GPU with quack-kernels (the fa4 extra)")


def _mlp_errors(swap, shape, d_model: int) -> list[float]:
    """Relative max errors of (out, grad x, grad gate_up, grad down) of the bf16 MLP with `swap` applied
    against a float64 copy."""
    from dscluster.train.model import GPTConfig, SwiGLU

    torch.manual_seed(0)
    mlp = SwiGLU(GPTConfig(n_layer=1, n_head=4, d_model=d_model, vocab_size=257, seq_len=64))
    exact = SwiGLU(GPTConfig(n_layer=1, n_head=4, d_model=d_model, vocab_size=257, seq_len=64))
    exact.load_state_dict(mlp.state_dict())
    mlp, exact = mlp.cuda().to(torch.bfloat16), exact.cuda().double()
    swap(mlp)
    x = torch.randn(*shape, d_model, device="cuda").to(torch.bfloat16)
    dy = torch.randn(*shape, d_model, device="cuda").to(torch.bfloat16)
    xs = x.clone().requires_grad_(), x.double().requires_grad_()
    outs = mlp(xs[0]), exact(xs[1])
    outs[0].backward(dy)
    outs[1].backward(dy.double())
    pairs = [(outs[0], outs[1]), (xs[0].grad, xs[1].grad), (mlp.gate_up.weight.grad, exact.gate_up.weight.grad),
             (mlp.down.weight.grad, exact.down.weight.grad)]
    for got, ref in pairs:
        assert got.dtype == torch.bfloat16 and got.shape == ref.shape
    return [float((got.double() - ref).abs().max() / ref.abs().max()) for got, ref in pairs]


@quack
@pytest.mark.parametrize("backward", ["cublas", "mixed", "quack"])
@pytest.mark.parametrize("shape,d_model", [((4, 1024), 512), ((3, 77), 256), ((2, 2048), 2048)])
def test_swiglu_mlp_matches_float64_as_closely_as_cublas(shape, d_model, backward, monkeypatch):
    from dscluster.train import kernels, mlp_kernels

    monkeypatch.setattr(mlp_kernels, "BACKWARD", backward)

    def with_kernel(m):
        m.silu_mul = kernels.silu_mul

    def with_quack(m):
        m.mlp_op = mlp_kernels.swiglu_mlp

    base = _mlp_errors(with_kernel, shape, d_model)
    got = _mlp_errors(with_quack, shape, d_model)
    for what, b, g in zip(("out", "grad x", "grad gate_up", "grad down"), base, got):
        assert g < 2e-2 and g <= 2 * b + 2e-3, (what, g, b)


@quack
def test_compiled_model_with_quack_is_as_exact_as_the_plain_model():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import kernel_grads

    report = kernel_grads.gradient_errors("cuda", quack=True)
    worst = {name: max(m["errors"].values()) for name, m in report["models"].items()}
    assert not kernel_grads.verdict(report), (kernel_grads.verdict(report), worst)
    assert abs(report["models"]["compiled+quack"]["loss"] - report["loss_fp64"]) < 1e-2


@quack
def test_auto_runs_quack_on_a_large_model_and_the_triton_kernels_on_a_small_one_or_with_fp8():
    """What `--kernels auto` picks on this GPU: QuACK's MLP for a model past perf.COMPILE_MIN_PARAMS
    (the 124M preset), the Triton kernels below it and with --precision fp8, swapped into every block."""
    from dscluster.train import kernels, mlp_kernels, perf
    from dscluster.train.model import GPT, preset_config

    large = GPT(preset_config("124m", seq_len=256, vocab_size=257))
    assert sum(p.numel() for p in large.parameters()) >= perf.COMPILE_MIN_PARAMS
    assert perf.use_kernels(large, "auto", "cuda") == "mlp_op+rotary_qkv (auto: quack)"
    assert all(b.mlp.mlp_op is mlp_kernels.swiglu_mlp for b in large.blocks)
    fp8 = GPT(preset_config("124m", seq_len=256, vocab_size=257))
    assert perf.use_kernels(fp8, "auto", "cuda", precision="fp8").endswith("(auto: triton)")
    assert all(b.mlp.mlp_op is None and b.mlp.silu_mul is kernels.silu_mul for b in fp8.blocks)
    small = GPT(preset_config("tiny"))
    assert perf.use_kernels(small, "auto", "cuda").endswith("(auto: triton)")
