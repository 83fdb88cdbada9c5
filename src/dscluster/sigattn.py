"""Failure signatures of attention written in the user's own model code, from round 200 of issue 45 (live: broken
users' scripts run for real on torch 2.13, DeepSpeed 0.19.8 and transformers 5.23): F.scaled_dot_product_attention
given a mask that does not broadcast to its scores, key/value heads that do not match the query's, or a float mask of
another dtype; nn.MultiheadAttention (and nn.Transformer's layers) given a 2D/3D attn_mask of another size, a
key_padding_mask whose batch is not the inputs', an embed_dim that its heads do not divide, or the is_causal hint with
no mask; hand-written rotary embeddings whose cos/sin tables are not the head dimension's; and transformers' attention
given an attention_mask of another length, or 3D. Each pattern is the wording of the component that prints it (ATen's
broadcast and SDPA checks, torch/nn/functional.py and activation.py, transformers' masking_utils.py and
integrations/sdpa_attention.py), under the code line that raised it where torch's words are generic, never one log's.
sigrounds.py places this table last among the rounds' tables, before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# torch's broadcast check (ATen's infer_size), the error line with its prefix.
_SIZE = r"RuntimeError: The size of tensor a \(\d+\) must match the size of tensor b \(\d+\) at non-singleton dimension "
# A traceback's source line of a call to torch's SDPA (F., torch.nn.functional., or imported by name), up to the error
# line two or three lines below (Python 3.11's caret line between).
_SDPA_CALL = r"\bscaled_dot_product_attention\("
_BELOW = r"[^\n]*\n(?:[^\n]*\n){0,2}?[^\n]*?"
# The lines after a call line whose end a bounded window read (each occurrence of the call's words reads a few hundred
# characters, never the rest of a line of them).
_NEXT = r"(?:[^\n]*\n){0,2}?[^\n]*?"

ATTN_SIGNATURES: tuple[Signature, ...] = (
    # transformers' integrations/sdpa_attention.py sdpa_attention_forward: the scores are (batch, heads, q_len,
    # kv_len) with kv_len the key states' length, and the mask transformers built from the attention_mask has that
    # many columns only when the attention_mask has input_ids' length; dimension 3 is the key length (dimension 1, the
    # heads, is hf-kv-heads-not-divisor's).
    _sig("hf-attention-mask-length",
         r"sdpa_attention_forward\n(?:[^\n]*\n){0,3}?[^\n]*?" + _SDPA_CALL + _BELOW + r"(?P<ev>" + _SIZE + r"3)\b",
         "A transformers model's attention got an attention_mask of another length than its input_ids: the mask's "
         "columns (one of the two numbers in the message) are not the sequence's tokens (the other). The batch's "
         "input_ids were cropped, padded or concatenated (a prompt, a prefix) after tokenizing while the "
         "attention_mask kept its old length, or the two come from different tokenizer calls (padding='max_length' for "
         "one of them).",
         "Keep input_ids and attention_mask the same shape: crop, pad or concatenate both together (batch["
         "'attention_mask'][:, :n] with batch['input_ids'][:, :n]), or tokenize once with the padding and truncation "
         "wanted; check batch['input_ids'].shape == batch['attention_mask'].shape. A restart fails the same way.",
         retry=False),
    # transformers 5.x masking_utils.py (sdpa_mask, eager_mask and the mask functions behind create_causal_mask): a 2D
    # (batch, seq) attention_mask is expanded to (batch, 1, q_len, kv_len): a 3D mask (batch, seq, seq) cannot be
    # ("expand(torch.LongTensor{[2, 1, 1, 32, 32]}, size=[2, -1, 32, 32]): the number of sizes provided (4) must be
    # greater or equal to the number of dimensions in the tensor (5)"). Only under masking_utils.py's frame.
    _sig("hf-attention-mask-3d",
         r"masking_utils\.py\"?, line \d+, in \w+\n(?:[^\n]*\n){0,4}?[^\n]*?(?P<ev>RuntimeError: expand\("
         r"torch\.\w+\{\[\d+, 1, 1, \d+, \d+\]\}, size=\[[^\]\n]{0,40}\]\): the number of sizes provided \(4\) must "
         r"be greater or equal to the number of dimensions in the tensor \(5\))",
         "A transformers model was given a 3D attention_mask (batch, seq, seq), such as a block-diagonal or causal "
         "mask built by hand for packed sequences: transformers' masking takes attention_mask as the tokenizer gives "
         "it, 2D (batch, seq) with 1 for real tokens, and builds the causal mask itself; a custom mask must be the "
         "full 4D one (batch, 1, q_len, kv_len).",
         "Pass the 2D padding mask (or none); for packed sequences without attention across documents give "
         "position_ids that restart at 0 for each document (DataCollatorWithFlattening, with an attention "
         "implementation that reads them), or pass your own mask as 4D: mask[:, None, :, :] (bool, True = attend). A "
         "restart fails the same way.", retry=False),
    # Hand-written rotary embeddings (the reference `q_embed = (q * cos) + (rotate_half(q) * sin)` of
    # apply_rotary_pos_emb, which many models copy): the last dimension (3 of (batch, heads, seq, head_dim)) is the
    # head dimension, and cos/sin tables of another width do not broadcast. Dimension 2, the positions, is another
    # cause (a table shorter than the sequence), not this one.
    _sig("rotary-head-dim",
         r"in apply_rotary_pos_emb\n" + _BELOW + r"(?P<ev>" + _SIZE + r"(?:3|-1))\b",
         "The rotary position embedding's cos/sin tables are not as wide as the attention heads: apply_rotary_pos_emb "
         "multiplies each head's query and key (batch, heads, seq, head_dim) by tables whose last dimension is "
         "another size (the two numbers in the message), most often a rotary embedding built for the hidden size "
         "(hidden_size) instead of the per-head dimension (hidden_size // num_heads), or for a config's head_dim "
         "that the attention's projections do not use.",
         "Build the rotary embedding with the head dimension: RotaryEmbedding(dim=hidden_size // num_heads) (or "
         "config.head_dim, and the same head_dim in the q/k/v projections); for partial rotary, apply it to the "
         "first rotary_dim channels only. A restart fails the same way.", retry=False),
    # torch's SDPA (aten's math path and the checks before the fused kernels) broadcasts attn_mask against the scores
    # (batch, heads, q_len, kv_len) from the right: a padding mask (batch, seq) lines its batch up with q_len, a mask
    # built for another length differs at 2 or 3. Only a call line that passes attn_mask, at dimension 0, 2 or 3
    # (dimension 1, the heads, is the next entry's when the call passes no mask).
    _sig("sdpa-attn-mask-shape",
         _SDPA_CALL + r"[^\n]{0,300}?\battn_mask=[^\n]{0,300}\n" + _NEXT + r"(?P<ev>" + _SIZE + r"[023])\b",
         "F.scaled_dot_product_attention's attn_mask does not broadcast to the attention scores (batch, heads, "
         "q_len, kv_len): a key padding mask (batch, seq) passed as it is lines its batch up with the query "
         "positions, and a mask built for another sequence length (a block_size, a padded length) has another "
         "number of rows or columns; the message gives the two sizes that differ.",
         "Shape the mask to broadcast: a padding mask as attn_mask=pad_mask[:, None, None, :] (bool, True = attend; "
         "(batch, 1, 1, kv_len)), a causal or bias mask for this batch's length (mask[:q_len, :kv_len]), or combine "
         "them as (batch, 1, q_len, kv_len). A restart fails the same way.", retry=False),
    # The same broadcast between query and key/value at dimension 1, the heads, with no mask in the call: key/value
    # with fewer heads than the query (grouped-query attention) and neither repeated nor enable_gqa=True.
    _sig("sdpa-kv-heads",
         _SDPA_CALL + r"(?![^\n]{0,300}\battn_mask=)[^\n]{0,300}\n" + _NEXT + r"(?P<ev>" + _SIZE + r"1)\b",
         "F.scaled_dot_product_attention got key/value with another number of heads than the query (dimension 1 "
         "of (batch, heads, seq, head_dim); the two numbers in the message): grouped-query or multi-query attention "
         "written by hand, whose few key/value heads are neither repeated to the query heads nor passed with "
         "enable_gqa=True, or a view that split heads and head_dim differently for q and k/v.",
         "Repeat the key/value heads to the query's, k = k.repeat_interleave(n_heads // n_kv_heads, dim=1) (and v), "
         "or call scaled_dot_product_attention(q, k, v, ..., enable_gqa=True) (torch 2.5+, query heads a multiple of "
         "the key/value heads). A restart fails the same way.", retry=False),
    # ATen's validate_sdpa_input: a float mask of another float dtype than the query (an integer one is
    # attention-mask-dtype's): "Expected attn_mask dtype to be bool or float or to match query dtype, but got
    # attn_mask.dtype: double and  query.dtype: float instead."
    _sig("attention-mask-float-dtype",
         r"\bExpected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask\.dtype: "
         r"(?:double|float|c10::Half|c10::BFloat16|Half|BFloat16)\b",
         "F.scaled_dot_product_attention was given a float attn_mask of another dtype than the query: an additive "
         "mask or bias built with numpy (float64, kept by torch.from_numpy) or in float32 while the model runs in "
         "half precision (or the reverse); SDPA takes a bool mask or a float one of the query's dtype.",
         "Convert the mask to the query's dtype where it is used, attn_mask=mask.to(q.dtype) (build it with "
         "torch.tensor(..., dtype=torch.float32) or .float() after torch.from_numpy), or use a bool mask (True = "
         "attend). A restart fails the same way.", retry=False),
    # torch/nn/functional.py multi_head_attention_forward (nn.MultiheadAttention, nn.Transformer's layers): "The shape
    # of the 2D attn_mask is torch.Size([64, 64]), but should be (32, 32)." / "The shape of the 3D attn_mask is ...,
    # but should be (batch * heads, L, S)."
    _sig("mha-attn-mask-shape",
         r"\bThe shape of the [23]D attn_mask is torch\.Size\(\[[\d, ]{1,40}\]\), but should be \([\d, ]{1,40}\)\.",
         "nn.MultiheadAttention (or an nn.Transformer layer's mask=/src_mask=) got an attn_mask of another shape "
         "than its inputs': a 2D mask must be (target length, source length) of this batch, a 3D one (batch * "
         "num_heads, target length, source length). A causal mask built once for a block_size or the longest "
         "sequence and passed whole for shorter batches, or a per-sample mask (batch, L, S) not repeated over the "
         "heads, does this.",
         "Build or slice the mask for each batch's length: mask[:T, :T] of a precomputed one, or "
         "nn.Transformer.generate_square_subsequent_mask(T); for a per-sample mask repeat it over the heads "
         "(mask.repeat_interleave(num_heads, dim=0)); padding goes in key_padding_mask. A restart fails the same "
         "way.", retry=False),
    # torch/nn/functional.py _mha_shape_check/multi_head_attention_forward: "Expected key_padded_mask.shape[0] to be
    # {bsz}, but got {key_padding_mask.shape[0]}" (the inputs' batch as the layer reads them).
    _sig("mha-key-padding-shape",
         r"\bExpected key_padded_mask\.shape\[0\] to be \d+, but got \d+",
         "nn.MultiheadAttention's key_padding_mask (batch, source length) does not have the batch the layer reads "
         "from its inputs: the layer was built with batch_first=False (the default) and given (batch, seq, dim) "
         "inputs, so it takes the sequence for the batch, or the mask was passed transposed (seq, batch).",
         "Build the layer with batch_first=True for (batch, seq, dim) inputs (nn.MultiheadAttention(dim, heads, "
         "batch_first=True), the same for nn.TransformerEncoderLayer), or transpose the inputs to (seq, batch, dim); "
         "key_padding_mask is (batch, seq) with True at padding. A restart fails the same way.", retry=False),
    # torch/nn/modules/activation.py MultiheadAttention.__init__: `assert self.head_dim * num_heads == self.embed_dim,
    # "embed_dim must be divisible by num_heads"` (the bare words; GPT-2's own message, with backticks and numbers, is
    # hf-heads-not-divisor's).
    _sig("mha-embed-dim-heads", r"AssertionError: embed_dim must be divisible by num_heads\s*$",
         "nn.MultiheadAttention (or an nn.Transformer layer) was built with an embed_dim that num_heads does not "
         "divide: each head takes embed_dim // num_heads of the features, so embed_dim must be a multiple of "
         "num_heads (100 features and 8 heads are not).",
         "Choose num_heads that divides embed_dim (4 or 5 for 100), or project the features to a multiple of the "
         "heads first (nn.Linear(100, 128) before 8 heads). A restart fails the same way.", retry=False),
    # torch/nn/functional.py multi_head_attention_forward: "Need attn_mask if specifying the is_causal hint. You may
    # use the Transformer module method `generate_square_subsequent_mask` to create this mask."
    _sig("mha-is-causal-no-mask", r"\bNeed attn_mask if specifying the is_causal hint\b",
         "nn.MultiheadAttention or an nn.Transformer layer was called with is_causal=True and no mask: there "
         "is_causal is only a hint that the mask given is causal (to pick a faster kernel), it does not make the "
         "attention causal by itself.",
         "Pass the causal mask with the hint: mask = nn.Transformer.generate_square_subsequent_mask(T) then "
         "encoder(x, mask=mask, is_causal=True) (attn_mask= for nn.MultiheadAttention); is_causal alone makes "
         "attention causal only in F.scaled_dot_product_attention. A restart fails the same way.", retry=False),
)
