"""Round 200's rules (issue 45, live: attention implementations and masks in the user's own model code):
F.scaled_dot_product_attention given a mask that does not broadcast (sdpa-attn-mask-shape), key/value heads that are
not the query's (sdpa-kv-heads) or a float mask of another dtype (attention-mask-float-dtype); nn.MultiheadAttention
and nn.Transformer's layers given an attn_mask of another size (mha-attn-mask-shape), a key_padding_mask of another
batch (mha-key-padding-shape), an embed_dim its heads do not divide (mha-embed-dim-heads) or is_causal with no mask
(mha-is-causal-no-mask); hand-written rotary tables not of the head dimension (rotary-head-dim); transformers'
attention given an attention_mask of another length (hf-attention-mask-length) or 3D (hf-attention-mask-3d). The
cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("sdpa-attn-mask-shape", "sdpa-kv-heads", "attention-mask-float-dtype", "mha-attn-mask-shape",
       "mha-key-padding-shape", "mha-embed-dim-heads", "mha-is-causal-no-mask", "rotary-head-dim",
       "hf-attention-mask-length", "hf-attention-mask-3d")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-attn-sdpa-padmask-2d", "sdpa-attn-mask-shape"),
    ("live-attn-sdpa-gqa-no-repeat", "sdpa-kv-heads"),
    ("live-attn-sdpa-mask-float64", "attention-mask-float-dtype"),
    ("live-attn-mha-mask-block-size", "mha-attn-mask-shape"),
    ("live-attn-mha-batch-first-kpm", "mha-key-padding-shape"),
    ("live-attn-mha-embed-not-divisible", "mha-embed-dim-heads"),
    ("live-attn-encoder-is-causal-no-mask", "mha-is-causal-no-mask"),
    ("live-attn-rotary-hidden-size", "rotary-head-dim"),
    ("live-attn-hf-bert-mask-length", "hf-attention-mask-length"),
    ("live-attn-hf-llama-3d-mask", "hf-attention-mask-3d"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_HF = "/opt/conda/lib/python3.10/site-packages/transformers"


@pytest.mark.parametrize("text, name", [
    # a causal mask precomputed for the block size, torch.nn.functional spelled out, Python 3.10 (no caret line)
    (_TB + '  File "model.py", line 88, in forward\n'
     "    y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=self.bias, dropout_p=0.1)\n"
     "RuntimeError: The size of tensor a (128) must match the size of tensor b (1024) at non-singleton dimension 3\n",
     "sdpa-attn-mask-shape"),
    # multi-query attention (one key/value head), SDPA imported by name, ranks' prefixes
    ('[rank1]:   File "mqa.py", line 31, in forward\n[rank1]:     out = scaled_dot_product_attention(q, k, v, '
     "is_causal=True)\n[rank1]: RuntimeError: The size of tensor a (12) must match the size of tensor b (1) at "
     "non-singleton dimension 1\n", "sdpa-kv-heads"),
    (_TB + "RuntimeError: Expected attn_mask dtype to be bool or float or to match query dtype, but got "
     "attn_mask.dtype: float and  query.dtype: c10::BFloat16 instead.\n", "attention-mask-float-dtype"),
    (_TB + "RuntimeError: The shape of the 3D attn_mask is torch.Size([8, 50, 50]), but should be (64, 50, 50).\n",
     "mha-attn-mask-shape"),
    (_TB + "AssertionError: Expected key_padded_mask.shape[0] to be 2, but got 128\n", "mha-key-padding-shape"),
    (_TB + '  File "/usr/lib/python3/dist-packages/torch/nn/modules/activation.py", line 1010, in __init__\n'
     '    assert self.head_dim * num_heads == self.embed_dim, "embed_dim must be divisible by num_heads"\n'
     "AssertionError: embed_dim must be divisible by num_heads\n", "mha-embed-dim-heads"),
    (_TB + "RuntimeError: Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
     "`generate_square_subsequent_mask` to create this mask.\n", "mha-is-causal-no-mask"),
    # HF's own apply_rotary_pos_emb, a config whose head_dim the projections do not use
    (_TB + f'  File "{_HF}/models/llama/modeling_llama.py", line 150, in apply_rotary_pos_emb\n'
     "    q_embed = (q * cos) + (rotate_half(q) * sin)\n"
     "RuntimeError: The size of tensor a (64) must match the size of tensor b (128) at non-singleton dimension 3\n",
     "rotary-head-dim"),
    (_TB + f'  File "{_HF}/integrations/sdpa_attention.py", line 96, in sdpa_attention_forward\n'
     "    attn_output = torch.nn.functional.scaled_dot_product_attention(\n"
     "RuntimeError: The size of tensor a (37) must match the size of tensor b (512) at non-singleton dimension 3\n",
     "hf-attention-mask-length"),
    (_TB + f'  File "{_HF}/masking_utils.py", line 380, in sdpa_mask\n'
     "    attention_mask = attention_mask.expand(batch_size, -1, q_length, kv_length)\n"
     "RuntimeError: expand(torch.BoolTensor{[4, 1, 1, 128, 128]}, size=[4, -1, 128, 128]): the number of sizes "
     "provided (4) must be greater or equal to the number of dimensions in the tensor (5)\n", "hf-attention-mask-3d"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # GPT-2's own head check, with its numbers: hf-heads-not-divisor's, not nn.MultiheadAttention's
    (_TB + "ValueError: `embed_dim` must be divisible by num_heads (got `embed_dim`: 100 and `num_heads`: 12).\n",
     "mha-embed-dim-heads"),
    # a rotary table shorter than the sequence: dimension 2, the positions, not the head dimension
    (_TB + '  File "model.py", line 30, in apply_rotary_pos_emb\n    q_embed = (q * cos) + (rotate_half(q) * sin)\n'
     "RuntimeError: The size of tensor a (4096) must match the size of tensor b (2048) at non-singleton dimension 2\n",
     "rotary-head-dim"),
    # the heads dimension under transformers' SDPA: grouped-query heads of the config (hf-kv-heads-not-divisor)
    (_TB + f'  File "{_HF}/integrations/sdpa_attention.py", line 96, in sdpa_attention_forward\n'
     "    attn_output = torch.nn.functional.scaled_dot_product_attention(\n"
     "RuntimeError: The size of tensor a (4) must match the size of tensor b (3) at non-singleton dimension 1\n",
     "hf-attention-mask-length"),
    # the same broadcast words with no attention frame: another shape mistake
    (_TB + '  File "train.py", line 12, in step\n    loss = (pred - target) ** 2\n'
     "RuntimeError: The size of tensor a (16) must match the size of tensor b (4) at non-singleton dimension 2\n",
     "sdpa-attn-mask-shape"),
    # an integer mask: attention-mask-dtype's, not the float one's
    (_TB + "RuntimeError: Expected attn_mask dtype to be bool or float or to match query dtype, but got "
     "attn_mask.dtype: long int and  query.dtype: float instead.\n", "attention-mask-float-dtype"),
    # a 2D mask given to a transformers model whose expand fails for another reason (sizes, not dimensions)
    (_TB + "RuntimeError: The expanded size of the tensor (128) must match the existing size (64) at non-singleton "
     "dimension 3.  Target sizes: [4, 1, 128, 128].  Tensor sizes: [4, 1, 1, 64]\n", "hf-attention-mask-3d"),
])
def test_near_misses(text, name):
    assert sig(text) != name


def test_integer_mask_stays_attention_mask_dtype():
    assert sig(_TB + "RuntimeError: Expected attn_mask dtype to be bool or float or to match query dtype, but got "
               "attn_mask.dtype: long int and  query.dtype: float instead.\n") == "attention-mask-dtype"
