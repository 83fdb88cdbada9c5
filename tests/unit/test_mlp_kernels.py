"""`--kernels quack` wiring on CPU (QuACK's GEMMs run on Hopper GPUs only, tests/gpu/test_gpu_mlp.py): its
refusals (pure), the swap into every MLP and nowhere else, the model calling the swapped op on its two
weights, the trainer's early refusal with the setting, and the fake shapes torch.compile traces through."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from dscluster.errors import ConfigError
from dscluster.train import kernels, mlp_kernels, perf
from dscluster.train.model import GPT, GPTConfig, SwiGLU


def test_refused_on_cpu_before_hopper_without_the_package_and_with_fp8():
    cpu = mlp_kernels.refusal("cpu", None, installed=True)
    assert isinstance(cpu, ConfigError) and cpu.setting == "--kernels" and "auto" in cpu.hint
    ampere = mlp_kernels.refusal("cuda", (8, 0), installed=True)
    assert "9.0" in str(ampere) and "8.0" in str(ampere)
    missing = mlp_kernels.refusal("cuda", (9, 0), installed=False)
    assert "quack" in str(missing) and "dscluster[fa4]" in missing.hint
    fp8 = mlp_kernels.refusal("cuda", (9, 0), installed=True, precision="fp8")
    assert fp8.setting == "--kernels" and "fp8" in str(fp8)
    zero3 = mlp_kernels.refusal("cuda", (9, 0), installed=True, zero_stage=3)
    assert zero3.setting == "--kernels" and "ZeRO-3" in str(zero3) and "--kernels auto" in zero3.hint
    narrow = mlp_kernels.refusal("cuda", (9, 0), installed=True, widths=(36, 128))
    assert narrow.setting == "--kernels" and "36" in str(narrow) and "multiple of 8" in narrow.hint
    assert mlp_kernels.refusal("cuda", (9, 0), installed=True) is None
    assert mlp_kernels.refusal("cuda", (9, 0), installed=True, zero_stage=2, widths=(2048, 5632)) is None
    assert mlp_kernels.refusal("cuda", (10, 0), installed=True) is None


@pytest.mark.parametrize("capability,installed,precision,zero_stage,layers,expected", [
    ((9, 0), True, "auto", 1, 3, "quack"),  # where it runs, on a model past the size threshold
    ((9, 0), True, "auto", 1, 1, "triton"),  # below it: QuACK's kernels would take longer to build than they save
    ((9, 0), False, "auto", 1, 3, "triton"),  # the package absent
    ((8, 0), True, "auto", 1, 3, "triton"),  # before Hopper
    ((9, 0), True, "fp8", 1, 3, "triton"),  # fp8 converts the linear layers QuACK's op would bypass
    ((9, 0), True, "auto", 3, 3, "triton"),  # ZeRO-3 keeps the weights the op reads partitioned
])
def test_auto_runs_quack_only_where_it_can_run_on_a_large_enough_model(monkeypatch, capability, installed, precision,
                                                                      zero_stage, layers, expected):
    def gpt(n_layer):
        return GPT(GPTConfig(n_layer=n_layer, n_head=2, d_model=32, seq_len=16))

    model = gpt(layers)
    monkeypatch.setattr(perf, "COMPILE_MIN_PARAMS", sum(p.numel() for p in gpt(2).parameters()))  # the threshold: 2 layers
    monkeypatch.setattr(mlp_kernels.hopper, "here", lambda kernel, device_type: (capability, installed))
    monkeypatch.setattr(kernels, "available", lambda: True)
    assert perf.auto_kernels(model, "cuda", precision, zero_stage) == expected
    ran = perf.use_kernels(model, "auto", "cuda", precision, zero_stage)
    assert ran.endswith(f"(auto: {expected})")
    assert all((b.mlp.mlp_op is mlp_kernels.swiglu_mlp) == (expected == "quack") for b in model.blocks)
    assert all(b.attn.rotary_qkv is kernels.rotary_qkv for b in model.blocks)


def test_auto_keeps_the_triton_kernels_for_widths_quacks_gemms_cannot_read(monkeypatch):
    monkeypatch.setattr(perf, "COMPILE_MIN_PARAMS", 0)
    monkeypatch.setattr(mlp_kernels.hopper, "here", lambda kernel, device_type: ((9, 0), True))
    assert perf.auto_kernels(GPT(GPTConfig(n_layer=1, n_head=2, d_model=32, seq_len=16)), "cuda") == "quack"
    assert perf.auto_kernels(GPT(GPTConfig(n_layer=1, n_head=2, d_model=36, seq_len=16)), "cuda") == "triton"
    odd_mlp = GPT(GPTConfig(n_layer=1, n_head=2, d_model=32, seq_len=16, ffn_hidden=100))
    assert perf.auto_kernels(odd_mlp, "cuda") == "triton"


def test_the_default_backward_is_the_measured_fastest_and_a_choice():
    assert mlp_kernels.BACKWARD == "mixed" and mlp_kernels.BACKWARD in mlp_kernels.BACKWARDS


def test_use_kernels_refuses_quack_on_cpu_and_swaps_nothing():
    model = GPT(GPTConfig(n_layer=2, n_head=2, d_model=32, seq_len=16))
    with pytest.raises(ConfigError) as err:
        perf.use_kernels(model, "quack", "cpu")
    assert err.value.setting == "--kernels"
    assert all(b.mlp.mlp_op is None for b in model.blocks)


def test_the_swap_reaches_every_mlp_with_the_rotary_kernel_and_the_model_calls_it_on_its_weights():
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=3, n_head=2, d_model=32, seq_len=16))
    x = torch.randint(0, 257, (2, 17))
    plain = model(x[:, :-1], x[:, 1:])
    assert perf.swap_kernels(model, "quack") == "mlp_op+rotary_qkv"
    assert all(isinstance(b.mlp, SwiGLU) and b.mlp.mlp_op is mlp_kernels.swiglu_mlp for b in model.blocks)
    assert all(b.attn.rotary_qkv is kernels.rotary_qkv for b in model.blocks)
    calls = []

    def spy(h, w_gate_up, w_down):  # the op's contract, in PyTorch's expressions
        calls.append((h.shape, w_gate_up.shape, w_down.shape))
        return F.linear(kernels.silu_mul_reference(F.linear(h, w_gate_up), w_down.shape[1]), w_down)

    for b in model.blocks:
        b.mlp.mlp_op = spy
        b.attn.rotary_qkv = kernels.rotary_qkv_reference
    swapped = model(x[:, :-1], x[:, 1:])
    assert torch.allclose(plain, swapped)
    assert calls == [(torch.Size([2, 16, 32]), torch.Size([2 * 128, 32]), torch.Size([32, 128]))] * 3


def test_the_custom_ops_have_fake_shapes_for_compile():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(2, 128, 256, dtype=torch.bfloat16)
        w1, w2 = torch.empty(2 * 704, 256, dtype=torch.bfloat16), torch.empty(256, 704, dtype=torch.bfloat16)
        out, preact, postact = mlp_kernels.swiglu_mlp_op(x, w1, w2)
        grads = [mlp_kernels.swiglu_mlp_backward(out, x, w1, w2, preact, "quack"),
                 mlp_kernels.swiglu_mlp_backward(out, x, w1, w2, preact, "cublas"),
                 mlp_kernels.swiglu_mlp_backward_cublas(out, x, w1, w2, preact, postact)]
    assert out.shape == x.shape and preact.shape == (256, 2 * 704) and postact.shape == (256, 704)
    for dx, dw1, dw2 in grads:
        assert (dx.shape, dw1.shape, dw2.shape) == (x.shape, w1.shape, w2.shape)


def test_trainer_refuses_quack_on_cpu_with_the_setting(tmp_path, capsys):
    from dscluster.train.__main__ import main

    rc = main(["--preset", "tiny", "--steps", "1", "--kernels", "quack", "--run-dir", str(tmp_path / "run"),
               "--save-dir", str(tmp_path / "ckpt")])
    err = capsys.readouterr().err
    assert rc != 0 and "--kernels quack" in err and "Traceback" not in err


CUBLAS_BACKWARD_CHECK = r"""
import json, torch
import torch.nn.functional as F
from dscluster.train import kernels, mlp_kernels
torch.manual_seed(0)
errors = []
for rows, d, hidden in [(3, 16, 40), (70, 32, 96)]:  # hidden below and above the kernel's block
    x = torch.randn(rows, d, dtype=torch.float64)
    w1, w2 = torch.randn(2 * hidden, d, dtype=torch.float64) / d**0.5, torch.randn(d, hidden, dtype=torch.float64) / hidden**0.5
    dout = torch.randn(rows, d, dtype=torch.float64)
    ref = [t.clone().requires_grad_() for t in (x, w1, w2)]
    F.linear(kernels.silu_mul_reference(F.linear(ref[0], ref[1]), hidden), ref[2]).backward(dout)
    gu = x @ w1.T
    preact = torch.stack((gu[:, :hidden], gu[:, hidden:]), dim=-1).reshape(rows, 2 * hidden)  # QuACK's order
    postact = kernels.silu_mul_reference(gu, hidden)
    got = mlp_kernels.swiglu_mlp_backward_cublas(dout, x, w1, w2, preact, postact)
    errors.append([float((g - r.grad).abs().max() / r.grad.abs().max()) for g, r in zip(got, ref)])
print(json.dumps({"errors": errors}))
"""


def test_the_cublas_backward_on_quacks_interleaved_layout_matches_autograd_in_tritons_interpreter(
        in_triton_interpreter):
    """The backward "cublas" runs: the SwiGLU kernel (interpreted) on the interleaved pre-activation, the
    gate/up weight and its gradient through the interleaved order; float64, so any misplaced column shows."""
    report = in_triton_interpreter(["-c", CUBLAS_BACKWARD_CHECK])
    assert len(report["errors"]) == 2
    for errs in report["errors"]:
        assert max(errs) < 1e-6, errs
