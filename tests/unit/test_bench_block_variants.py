"""benchmarks/block_kernels.py times the earlier attention layout against the model's: the comparison only
means something if both compute the same thing, checked here on CPU in float64."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import block_kernels  # noqa: E402

from dscluster.train.model import GPT, GPTConfig  # noqa: E402


def test_bhtd_variant_equals_the_models_attention_and_gradients():
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=1, n_head=4, d_model=64, vocab_size=61, seq_len=24)).double()
    attn = model.blocks[0].attn
    x = torch.randn(3, 24, 64, dtype=torch.float64, requires_grad=True)
    outputs, grads = [], []
    for forward in (attn.forward, block_kernels.bhtd_attention_forward.__get__(attn)):
        x.grad = None
        out = forward(x, model.rotary)
        out.square().sum().backward()
        outputs.append(out.detach())
        grads.append(x.grad.clone())
    torch.testing.assert_close(outputs[0], outputs[1])
    torch.testing.assert_close(grads[0], grads[1])
