"""The trainer's speed options on CPU: same numbers, same checkpoints, same data order as without them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dscluster.train import perf
from dscluster.train.model import GPT, GPTConfig


@pytest.fixture(scope="module")
def cfg():
    return GPTConfig(n_layer=2, n_head=2, d_model=32, vocab_size=61, seq_len=16)


def _grads(model, x):
    model.zero_grad(set_to_none=True)
    loss = model(x[:, :-1], x[:, 1:])
    loss.backward()
    return loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}


def test_activation_checkpointing_keeps_keys_loss_and_gradients(cfg):
    torch.manual_seed(0)
    plain = GPT(cfg)
    ckpt = GPT(cfg)
    ckpt.load_state_dict(plain.state_dict())
    perf.checkpoint_blocks(ckpt)
    assert list(ckpt.state_dict()) == list(plain.state_dict())  # checkpoints stay interchangeable
    x = torch.randint(0, cfg.vocab_size, (3, cfg.seq_len + 1))
    loss_a, grads_a = _grads(plain, x)
    loss_b, grads_b = _grads(ckpt, x)
    torch.testing.assert_close(loss_a, loss_b)
    for name, g in grads_a.items():
        torch.testing.assert_close(g, grads_b[name], msg=name)


def test_compile_auto_is_off_on_cpu_and_bad_modes_are_named(cfg):
    model = GPT(cfg)
    assert perf.compile_model(model, "auto", device_type="cpu") == "off (CPU)"
    assert perf.compile_model(model, "off", device_type="cpu") == "off"
    with pytest.raises(ValueError, match="blocks"):
        perf.compile_model(model, "fast", device_type="cpu")
    with pytest.raises(ValueError, match="cudnn"):
        with perf.attention_backend("fastest"):
            pass


def test_kernels_stay_off_on_cpu_and_bad_modes_are_named(cfg):
    model = GPT(cfg)
    assert perf.use_kernels(model, "triton", device_type="cpu") == "off (CPU)"
    assert perf.use_kernels(model, "auto", device_type="cpu") == "off (CPU)"
    assert perf.use_kernels(model, "off", device_type="cuda") == "off"
    assert all(b.mlp.silu_mul.__name__ == "silu_mul_reference" for b in model.blocks)
    with pytest.raises(ValueError, match="triton"):
        perf.use_kernels(model, "fastest", device_type="cpu")


def test_attention_equals_a_written_out_causal_attention_with_rotary(cfg):
    """The model's layout tricks (rotary in (B, T, H, hd), SDPA on transposed views) against the
    textbook formula, position by position."""
    torch.manual_seed(0)
    model = GPT(cfg).double()
    attn, H, hd = model.blocks[0].attn, cfg.n_head, cfg.head_dim
    x = torch.randn(2, cfg.seq_len, cfg.d_model, dtype=torch.float64)
    q, k, v = (x @ attn.qkv.weight.T).split(cfg.d_model, dim=-1)
    q, k, v = (t.reshape(2, cfg.seq_len, H, hd) for t in (q, k, v))
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))

    def rotate(t, pos):  # rotate each pair (i, i + hd/2) by pos * inv_freq[i]
        angle = pos * inv_freq
        a, b = t[..., : hd // 2], t[..., hd // 2:]
        return torch.cat((a * angle.cos() - b * angle.sin(), b * angle.cos() + a * angle.sin()), dim=-1)

    q = torch.stack([rotate(q[:, t], t) for t in range(cfg.seq_len)], dim=1)
    k = torch.stack([rotate(k[:, t], t) for t in range(cfg.seq_len)], dim=1)
    scores = torch.einsum("bthd,bshd->bhts", q, k) / hd**0.5
    causal = torch.ones(cfg.seq_len, cfg.seq_len, dtype=torch.bool).tril()
    weights = scores.masked_fill(~causal, float("-inf")).softmax(-1)
    expected = torch.einsum("bhts,bshd->bthd", weights, v).reshape(2, cfg.seq_len, cfg.d_model) @ attn.proj.weight.T
    torch.testing.assert_close(attn(x, model.rotary), expected)


def test_prefetcher_yields_the_samplers_batches_in_order():
    made = []

    def make(step, micro):
        made.append((step, micro))
        return np.full((2, 5), step * 10 + micro, dtype=np.int64)

    pf = perf.BatchPrefetcher(make, start_step=3, accum=2, device=torch.device("cpu"), depth=2)
    try:
        for step in range(3, 6):
            for micro in range(2):
                t = pf.next(step, micro)
                assert t.shape == (2, 5) and int(t[0, 0]) == step * 10 + micro
    finally:
        pf.close()
    assert made[:6] == [(3, 0), (3, 1), (4, 0), (4, 1), (5, 0), (5, 1)]


def test_prefetcher_reraises_a_loader_error_in_the_training_thread():
    def make(step, micro):
        raise OSError("shard vanished")

    pf = perf.BatchPrefetcher(make, start_step=0, accum=1, device=torch.device("cpu"))
    with pytest.raises(OSError, match="shard vanished"):
        pf.next(0, 0)
    pf.close()


def test_state_bytes_per_param_shrinks_with_zero_sharding():
    assert perf.optimizer_state_bytes_per_param(0, 4) == 16
    assert perf.optimizer_state_bytes_per_param(1, 4) == 4


def test_eager_context_runs_compiled_modules_uncompiled_and_restores_them(cfg):
    model = GPT(cfg)
    sentinel = object()
    model.blocks[0]._compiled_call_impl = sentinel  # what Module.compile() sets
    with perf.eager(model):
        assert model.blocks[0]._compiled_call_impl is None
        model(torch.randint(0, cfg.vocab_size, (1, 4)))  # runs the plain forward
    assert model.blocks[0]._compiled_call_impl is sentinel
    assert perf.compile_model(model, "auto", device_type="cuda", zero_stage=3) == "off (ZeRO-3)"


def test_chunked_cross_entropy_equals_the_full_loss_and_gradients():
    from dscluster.train.model import chunked_cross_entropy

    torch.manual_seed(1)
    x = torch.randn(2, 7, 16, dtype=torch.float64, requires_grad=True)
    w = torch.randn(50, 16, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 50, (2, 7))
    full = torch.nn.functional.cross_entropy((x @ w.T).view(-1, 50), t.view(-1))
    gx, gw = torch.autograd.grad(full, (x, w))
    chunked = chunked_cross_entropy(x, w, t, chunk_rows=4)  # 14 rows: chunks of 4, 4, 4, 2
    cx, cw = torch.autograd.grad(chunked, (x, w))
    torch.testing.assert_close(chunked.double(), full)
    torch.testing.assert_close(cx, gx)
    torch.testing.assert_close(cw, gw)


def test_chunked_cross_entropy_without_gradients_is_the_same_loss():
    from dscluster.train.model import chunked_cross_entropy

    torch.manual_seed(2)
    x, w, t = torch.randn(3, 5, 8), torch.randn(40, 8), torch.randint(0, 40, (3, 5))
    full = torch.nn.functional.cross_entropy((x @ w.T).view(-1, 40), t.view(-1))
    with torch.no_grad():
        torch.testing.assert_close(chunked_cross_entropy(x, w, t, chunk_rows=4), full)


def test_large_vocabulary_model_trains_through_the_fused_loss_like_the_plain_one():
    # The GPT switches to the fused chunked loss from CHUNKED_CE_MIN_VOCAB on; its loss and every
    # parameter's gradient (the tied embedding gets both the lookup's and the head's share) must match
    # the plain full-logits loss.
    from dscluster.train import model as m

    torch.manual_seed(3)
    cfg = m.GPTConfig(n_layer=1, n_head=2, d_model=16, vocab_size=m.CHUNKED_CE_MIN_VOCAB, seq_len=8)
    gpt = m.GPT(cfg).double()
    idx = torch.randint(0, cfg.vocab_size, (2, 9))
    fused = gpt(idx[:, :-1], idx[:, 1:])
    fused_grads = torch.autograd.grad(fused, list(gpt.parameters()))
    _, x = gpt.norm(*_body(gpt, idx[:, :-1]))
    plain = torch.nn.functional.cross_entropy((x @ gpt.embed.weight.T).view(-1, cfg.padded_vocab),
                                              idx[:, 1:].reshape(-1))
    plain_grads = torch.autograd.grad(plain, list(gpt.parameters()))
    torch.testing.assert_close(fused, plain)
    for a, b in zip(fused_grads, plain_grads):
        torch.testing.assert_close(a, b)


def _body(gpt, idx):
    x, branch = gpt.embed(idx), None
    for block in gpt.blocks:
        x, branch = block(x, branch, gpt.rotary)
    return x, branch


def test_jit_builds_use_the_ninja_next_to_the_interpreter(tmp_path):
    from dscluster.train.trainer import ninja_first_path

    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    python = str(venv_bin / "python")
    assert ninja_first_path("/usr/bin:/bin", python) == "/usr/bin:/bin"  # no ninja there: PATH untouched
    (venv_bin / "ninja").touch()
    assert ninja_first_path(f"/usr/bin:{venv_bin}:/bin", python) == f"{venv_bin}:/usr/bin:/bin"


def test_kernel_swap_names_what_it_swapped_and_cpu_keeps_pytorchs_expressions():
    from dscluster.train import kernels, perf
    from dscluster.train.model import GPT, preset_config

    model = GPT(preset_config("tiny", n_layer=2))
    assert perf.use_kernels(model, "auto", "cpu") == "off (CPU)"
    assert model.blocks[0].attn.rotary_qkv is kernels.rotary_qkv_reference
    assert perf.swap_kernels(model, "swiglu") == "silu_mul"
    assert model.blocks[1].mlp.silu_mul is kernels.silu_mul
    assert model.blocks[1].attn.rotary_qkv is kernels.rotary_qkv_reference
    assert perf.swap_kernels(model, "triton") == "silu_mul+rotary_qkv"
    assert all(b.attn.rotary_qkv is kernels.rotary_qkv for b in model.blocks)
    assert perf.AUTO_KERNELS in perf.KERNEL_MODES
    with pytest.raises(ValueError, match="unknown kernels mode"):
        perf.use_kernels(model, "cuda-graphs", "cuda")
