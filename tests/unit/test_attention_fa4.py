"""`--attention fa4` wiring on CPU: its refusals (pure), the swap into the model, the trainer's early
refusal with the setting and the fix, and the fake (meta) implementation torch.compile traces through."""

from __future__ import annotations

import pytest
import torch

from dscluster.errors import ConfigError
from dscluster.train import attention
from dscluster.train.model import GPT, GPTConfig


def test_refused_on_cpu_before_hopper_and_without_the_package():
    cpu = attention.refusal("cpu", None, installed=True)
    assert isinstance(cpu, ConfigError) and cpu.setting == "--attention" and "auto" in cpu.hint
    ampere = attention.refusal("cuda", (8, 0), installed=True)
    assert "9.0" in str(ampere) and "8.0" in str(ampere)
    missing = attention.refusal("cuda", (9, 0), installed=False)
    assert "flash_attn.cute" in str(missing) and "dscluster[fa4]" in missing.hint
    assert attention.refusal("cuda", (9, 0), installed=True) is None
    assert attention.refusal("cuda", (10, 0), installed=True) is None


def test_use_attention_keeps_sdpa_unless_fa4_and_refuses_fa4_here():
    model = GPT(GPTConfig(n_layer=2, n_head=2, d_model=32, seq_len=16))
    assert attention.use_attention(model, "auto", "cpu") == "sdpa (auto)"
    assert all(b.attn.attend is attention.sdpa_attention for b in model.blocks)
    with pytest.raises(ConfigError) as err:
        attention.use_attention(model, "fa4", "cpu")
    assert err.value.setting == "--attention"
    assert all(b.attn.attend is attention.sdpa_attention for b in model.blocks)  # nothing swapped


def test_swap_reaches_every_layer_and_the_model_still_trains_with_the_swapped_function():
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=3, n_head=2, d_model=32, seq_len=16))
    calls = []

    def spy(q, k, v):
        calls.append(q.shape)
        return attention.sdpa_attention(q, k, v)

    assert attention.swap_attention(model, spy) == "flash-attn-4 in 3 layers"
    x = torch.randint(0, 257, (2, 17))
    model(x[:, :-1], x[:, 1:]).backward()
    assert calls == [torch.Size([2, 16, 2, 16])] * 3


def test_sdpa_attention_keeps_the_projection_layout():
    q, k, v = (torch.randn(2, 8, 3, 4) for _ in range(3))
    ref = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                           is_causal=True).transpose(1, 2)
    assert torch.allclose(attention.sdpa_attention(q, k, v), ref)


def test_the_custom_op_has_fake_shapes_for_compile():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q = torch.empty(2, 128, 4, 64, dtype=torch.bfloat16)
        out, lse = attention.fa4_attention_op(q, q, q)
        dq, dk, dv = attention.fa4_attention_backward(q, q, q, out, out, lse)
    assert out.shape == q.shape and lse.shape == (2, 4, 128) and lse.dtype == torch.float32
    assert dq.shape == dk.shape == dv.shape == q.shape


def test_trainer_refuses_fa4_on_cpu_with_the_setting(tmp_path, capsys):
    from dscluster.train.__main__ import main

    rc = main(["--preset", "tiny", "--steps", "1", "--attention", "fa4", "--run-dir", str(tmp_path / "run"),
               "--save-dir", str(tmp_path / "ckpt")])
    err = capsys.readouterr().err
    assert rc != 0 and "--attention fa4" in err and "Traceback" not in err


FUSED_CHECK = r"""
import json, types, torch
import torch.nn.functional as F
from dscluster.train import attention, kernels

# FlashAttention-4 stands in as float64 math with its interface's contract: strided inputs as they are,
# the backward writing into the dq, dk, dv buffers it is given. The rotary kernel is the real one.
writes = []

def probs(q, k):
    s = torch.einsum("bthd,bshd->bhts", q.double(), k.double()) / q.shape[-1] ** 0.5
    return s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))

def fwd(q, k, v, causal, return_lse):
    s = probs(q, k)
    out = torch.einsum("bhts,bshd->bthd", s.softmax(-1), v.double()).to(q.dtype).contiguous()  # as FA4 allocates it
    return out, s.logsumexp(-1).float()

def bwd(q, k, v, out, dout, lse, causal, dq, dk, dv):  # attention's backward by hand (no autograd in here)
    p, do, scale = probs(q, k).softmax(-1), dout.double(), q.shape[-1] ** -0.5
    dp = torch.einsum("bthd,bshd->bhts", do, v.double())
    ds = p * (dp - (do * out.double()).sum(-1).transpose(1, 2)[..., None])
    grads = (torch.einsum("bhts,bshd->bthd", ds, k.double()) * scale,
             torch.einsum("bhts,bthd->bshd", ds, q.double()) * scale, torch.einsum("bhts,bthd->bshd", p, do))
    for buf, g in zip((dq, dk, dv), grads):
        writes.append(buf.data_ptr())
        buf.copy_(g)
    return dq, dk, dv

attention._interface = lambda: types.SimpleNamespace(_flash_attn_fwd=fwd, _flash_attn_bwd=bwd)
torch.manual_seed(0)
report = []
for B, T, H, hd in [(2, 6, 2, 16), (1, 9, 3, 32)]:
    qkv = torch.randn(B, T, 3, H, hd, dtype=torch.float32)
    theta = torch.randn(T, hd // 2)
    grad = torch.randn(B, T, H, hd)
    ref_in = qkv.double().requires_grad_()
    q, k, v = kernels.rotary_qkv_reference(ref_in, theta.cos().double(), theta.sin().double())
    ref = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         is_causal=True).transpose(1, 2)
    ref.backward(grad.double())
    x = qkv.clone().requires_grad_()
    writes.clear()
    out = attention.fa4_rotary_attention(x, theta.cos(), theta.sin())
    out.backward(grad)
    rel = lambda a, b: float((a.double() - b).abs().max() / b.abs().max())
    report.append({"out": rel(out, ref), "grad": rel(x.grad, ref_in.grad), "shape": list(x.grad.shape),
                   "into_one_buffer": writes[1] - writes[0] == writes[2] - writes[1] == H * hd * 4})
compiled = torch.compile(lambda t, c, s: attention.fa4_rotary_attention(t, c, s) * 2)
t, theta = torch.randn(1, 4, 3, 2, 8), torch.randn(4, 4)
compiled_err = float((compiled(t, theta.cos(), theta.sin()) - 2 * attention.fa4_rotary_attention(t, theta.cos(),
                                                                                              theta.sin())).abs().max())
print(json.dumps({"cases": report, "compiled_err": compiled_err}))
"""


def test_rotary_and_fa4_as_one_op_match_the_model_expression_in_tritons_interpreter(in_triton_interpreter):
    """The fused op's own work (the rotary kernel forward and in place backward, v and dv read and written
    where the projection keeps them) against the model's rotary and SDPA in float64; FA4 itself is a stand-in
    here (tests/gpu/test_gpu_attention.py runs the real one)."""
    report = in_triton_interpreter(["-c", FUSED_CHECK])
    assert len(report["cases"]) == 2
    for case in report["cases"]:
        assert case["out"] < 1e-5 and case["grad"] < 1e-5, case  # fp32 kernels against float64
        assert case["into_one_buffer"], case  # dq, dk, dv: the three parts of one (B, T, 3, H, hd) gradient
    assert report["compiled_err"] < 1e-5


def test_fa4_swaps_in_as_one_op_with_the_rotary_kernel_and_apart_without_it(monkeypatch):
    from dscluster.train import kernels

    model = GPT(GPTConfig(n_layer=2, n_head=2, d_model=32, seq_len=16))
    assert attention.swap_attention(model, attention.fa4_attention) == "flash-attn-4 in 2 layers"
    assert all(b.attn.attend_qkv is None for b in model.blocks)  # the plain rotary: FA4 alone
    for b in model.blocks:
        b.attn.rotary_qkv = kernels.rotary_qkv
    assert attention.swap_attention(model, attention.fa4_attention) == \
        "flash-attn-4 in 2 layers, with the rotary kernel as one op"
    assert all(b.attn.attend_qkv is attention.fa4_rotary_attention for b in model.blocks)


def test_the_fused_op_has_fake_shapes_for_compile():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        qkv, cs = torch.empty(2, 128, 3, 4, 64, dtype=torch.bfloat16), torch.empty(128, 32)
        out, lse, qk = attention.fa4_rotary_attention_op(qkv, cs, cs)
        grad = attention.fa4_rotary_attention_backward(qk, qkv, out, out, lse, cs, cs)
    assert out.shape == (2, 128, 4, 64) and lse.shape == (2, 4, 128) and qk.shape == (2, 128, 2, 4, 64)
    assert grad.shape == qkv.shape
