"""GPT presets: exact parameter counts (shape-only, nothing allocated), shapes, FLOPs, bad sizes."""

from __future__ import annotations

import pytest
import torch

from dscluster.errors import ConfigError
from dscluster.train.model import GPT, PRESETS, GPTConfig, flops_per_token, param_count, preset_config

# Nominal names are with a GPT-2 vocabulary (50257); the counts must land near them.
NOMINAL = {"124m": 124e6, "350m": 350e6, "760m": 760e6, "1.3b": 1.3e9, "2.7b": 2.7e9, "6.7b": 6.7e9}


@pytest.mark.parametrize("name", list(PRESETS))
def test_param_count_matches_the_module_on_meta_device(name):
    cfg = preset_config(name, vocab_size=50257)
    with torch.device("meta"):  # 6.7B parameters cost no memory here
        model = GPT(cfg)
    assert sum(p.numel() for p in model.parameters()) == param_count(cfg)
    assert param_count(cfg, non_embedding=True) == param_count(cfg) - cfg.padded_vocab * cfg.d_model
    if name in NOMINAL:
        assert abs(param_count(cfg) - NOMINAL[name]) / NOMINAL[name] < 0.05, param_count(cfg)


def test_flops_per_token_is_6n_plus_attention():
    cfg = preset_config("124m", vocab_size=50257)
    n = param_count(cfg, non_embedding=True) + cfg.padded_vocab * cfg.d_model
    assert flops_per_token(cfg) == 6 * n + 12 * 12 * 768 * 1024
    assert flops_per_token(cfg, seq_len=2048) > flops_per_token(cfg)


def test_tiny_forward_shapes_loss_and_generate():
    torch.manual_seed(0)
    cfg = preset_config("tiny")
    model = GPT(cfg)
    x = torch.randint(0, 256, (3, cfg.seq_len))
    loss = model(x, x)
    assert loss.shape == () and 4.0 < loss.item() < 7.5  # about ln(vocab) at init
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    assert model(x).shape == (3, cfg.vocab_size)  # last-position logits, padding dropped
    out = model.generate(x[:1, :4], 5, generator=torch.Generator().manual_seed(1))
    assert out.shape == (1, 9) and torch.equal(out[:, :4], x[:1, :4])


def test_explicit_sizes_override_the_preset():
    cfg = preset_config("tiny", n_layer=2, d_model=64, n_head=2, seq_len=32, vocab_size=300)
    assert (cfg.n_layer, cfg.d_model, cfg.head_dim, cfg.padded_vocab) == (2, 64, 32, 320)


def test_unknown_preset_names_the_choices():
    with pytest.raises(ConfigError) as err:
        preset_config("124M")
    assert err.value.setting == "--preset"
    assert "124m" in err.value.hint and "6.7b" in err.value.hint


@pytest.mark.parametrize("kw,setting", [(dict(d_model=100, n_head=3), "n_head"), (dict(d_model=6, n_head=2), "n_head"),
                                        (dict(n_layer=0), "n_layer")])
def test_bad_sizes_are_config_errors(kw, setting):
    with pytest.raises(ConfigError) as err:
        GPTConfig(**{"n_layer": 2, "n_head": 2, "d_model": 64, **kw})
    assert err.value.setting == setting
