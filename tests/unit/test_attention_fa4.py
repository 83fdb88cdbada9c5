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
