"""Failure signatures of tensor shape manipulation in a user's model code, from round 221 of issue 45 (live: broken
users' scripts run for real on torch 2.13 under DDP, gloo): a view or reshape to sizes written into the code (the
configured batch size on the last, smaller batch), an einsum equation whose subscripts do not fit an operand, torch.cat
of tensors that differ outside the joined dimension (a learned [CLS] token not expanded to the batch), torch.stack of
tensors of different shapes outside the DataLoader (each batch's outputs stacked where the last batch is smaller),
split sizes that do not add up, expand on a dimension that is not 1, a permute ordering of another length than the
tensor's dimensions, and a 1-D tensor indexed in dimension 1 (a bare squeeze() that removed a batch of one). Each
pattern is ATen's own wording (aten/src/ATen/native/TensorShape.cpp, Linear.cpp's einsum, WrapDimUtils.h), never one
log's. sigrounds.py places this table after the tables whose narrower readings of the same words must win
(siglibs' collate-unequal-size under collate's frame, sigvision's skip-connection-size-mismatch for maps one pixel
apart, sigmodels' positions-exceeded under BERT's embeddings, sigzero3's ds_tensor copy, siggen's cache cat)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from math import prod

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

_RETRY = " A restart fails the same way."


def _before(m: re.Match, words: tuple[str, ...], span: int = 1500) -> bool:
    """Whether one of `words` stands in the traceback lines just before the match (a frame or source line)."""
    head = m.string[max(0, m.start() - span):m.start()]
    return any(w in head for w in words)


def _under_collate(m: re.Match, texts: Iterable[str]) -> bool:
    return _before(m, ("in collate_tensor_fn", "in default_collate"))


def _under_bert_embeddings(m: re.Match, texts: Iterable[str]) -> bool:
    return _before(m, ("buffered_token_type_ids.expand",), 600)


def _not_batch_hardcoded(m: re.Match, texts: Iterable[str]) -> bool:
    """A view's shape whose first size is not the tensor's batch: the rest of the shape divides the input's numel and
    leaves another first size (the last, smaller batch), else it is another shape mistake."""
    sizes = [int(s) for s in m.group("shape").split(",") if s.strip()]
    if len(sizes) < 2 or any(s <= 0 for s in sizes):
        return True
    rest, numel = prod(sizes[1:]), int(m.group("numel"))
    return numel % rest != 0 or numel // rest == sizes[0]


SHAPE_SIGNATURES: tuple[Signature, ...] = (
    # ATen's view/reshape check (TensorShape.cpp infer_size: "shape '[32, 784]' is invalid for input of size 3136")
    # where the shape's sizes after the first divide the input: the first, the batch, was written into the code.
    _sig("view-batch-size-hardcoded",
         r"shape '\[(?P<shape>[\d, ]{1,80})\]' is invalid for input of size (?P<numel>\d+)",
         "A view or reshape names the batch size as a constant (x.view(BATCH_SIZE, ...), the configured batch size) "
         "and the tensor holds another number of samples: the message's input size is a whole number of rows of the "
         "other sizes, fewer (or more) than the first size asked. Most often the last batch of an epoch, smaller "
         "when the dataset (or each rank's shard of it) is not a multiple of the batch size; or an evaluation run "
         "with another batch size.",
         "Take the batch size from the tensor: x.view(x.size(0), -1) (or x.flatten(1), x.reshape(B, ...) with B = "
         "x.shape[0]); drop_last=True on the DataLoader only hides it in training." + _RETRY, retry=False,
         aside_if=_not_batch_hardcoded),
    # Linear.cpp's einsum parser: "einsum(): the number of subscripts in the equation (4) does not match the number of
    # dimensions (3) for operand 1 and no ellipsis was given".
    _sig("einsum-subscripts-dims",
         r"einsum\(\): the number of subscripts in the equation \(\d+\) does not match the number of dimensions "
         r"\(\d+\) for operand \d+",
         "An einsum equation gives one operand another number of subscripts than the tensor has dimensions (the "
         "message names the operand, counted from 0, and both numbers): the equation was written for other layouts, "
         "e.g. a multi-head equation (bhqd,bhkd->bhqk) given keys without a head dimension (multi-query or grouped "
         "keys, (B, T, D)), or a tensor not yet split into heads.",
         "Make each operand's subscripts match its shape: write the equation for the tensors as they are "
         "(bhqd,bkd->bhqk for keys shared by every head), or reshape/unsqueeze the operand to the layout the "
         "equation names (k.unsqueeze(1)); use ... for leading dimensions that vary." + _RETRY, retry=False),
    # TensorShape.cpp check_cat_shape_except_dim, after the narrower readings of other tables: "Sizes of tensors must
    # match except in dimension 1. Expected size 1 but got size 8 for tensor number 1 in the list."
    _sig("cat-sizes-differ",
         r"Sizes of tensors must match except in dimension -?\d+\. Expected size \d+ but got size \d+ for tensor "
         r"number \d+ in the list",
         "torch.cat joins tensors that must have the same size in every dimension but the joined one, and one "
         "differs (the message: which tensor of the list, the size expected and the size it has). When one size is "
         "1 and the other the batch, a learned tensor of shape (1, ...) (a [CLS] token, prompt or query tokens, a "
         "register token) is joined to the batch's tensors without being expanded to the batch; otherwise two "
         "tensors of other lengths, widths or batches.",
         "Make the sizes agree before the cat: expand a (1, ...) learned token to the batch "
         "(self.cls_token.expand(x.size(0), -1, -1)), pad, crop or project the tensor of the other size, and check "
         "that dim= is the dimension meant to grow; print each tensor's shape before the cat." + _RETRY,
         retry=False),
    # TensorShape.cpp's stack check outside the DataLoader's collate (siglibs' collate-unequal-size reads that one):
    # "stack expects each tensor to be equal size, but got [16, 4] at entry 0 and [13, 4] at entry 2".
    _sig("stack-unequal-size",
         r"stack expects each tensor to be equal size, but got \[[\d, ]{0,60}\] at entry \d+ and \[[\d, ]{0,60}\] "
         r"at entry \d+",
         "torch.stack adds a new dimension and needs every tensor of the same shape, and they differ (the message "
         "gives two). Most often each batch's outputs (logits, labels, embeddings) collected in a list and stacked "
         "after the loop, where the last batch is smaller; or sequences, images or per-rank results of other sizes.",
         "Join along the existing dimension with torch.cat(list, dim=0) for per-batch results; pad to one size "
         "(torch.nn.utils.rnn.pad_sequence) where a new dimension is really meant." + _RETRY, retry=False,
         aside_if=_under_collate),
    # TensorShape.cpp split_with_sizes: "split_with_sizes expects split_sizes to sum exactly to 96 (input tensor's size
    # at dimension -1), but got split_sizes=[64, 64, 64]".
    _sig("split-sizes-sum",
         r"split_with_sizes expects split_sizes to sum exactly to \d+ \(input tensor's size at dimension -?\d+\), "
         r"but got split_sizes=\[[\d, ]{0,80}\]",
         "Tensor.split (or torch.split) was given a list of sizes that does not add up to the tensor's size in that "
         "dimension (the message gives both): e.g. a fused q/k/v projection split as [dim, dim, dim] while its keys "
         "and values are narrower (grouped- or multi-query attention: kv_heads * head_dim each), or sizes written "
         "into the code for another configuration.",
         "Compute the split sizes from the same numbers that built the tensor (split([dim, kv_dim, kv_dim], -1) "
         "where the Linear has dim + 2 * kv_dim outputs), or give one int (x.split(size, dim)) / use chunk(n) for "
         "equal parts." + _RETRY, retry=False),
    # ATen's expand check (ExpandUtils.cpp inferExpandGeometry): "The expanded size of the tensor (24) must match the
    # existing size (128) at non-singleton dimension 1.  Target sizes: [4, 24, -1].  Tensor sizes: [128, 32]".
    _sig("expand-non-singleton",
         r"The expanded size of the tensor \(\d+\) must match the existing size \(\d+\) at non-singleton dimension "
         r"\d+\.\s+Target sizes: \[[\d, -]{0,80}\]\.\s+Tensor sizes: \[[\d, ]{0,80}\]",
         "Tensor.expand (or expand_as) can only repeat dimensions of size 1 (and add new leading ones, matching the "
         "sizes from the right), and the tensor has another size than the target in a dimension that is not 1 (the "
         "message gives both shapes): e.g. a whole position table (max_len rows) expanded to a batch of T "
         "positions, or a mask or bias of another length.",
         "Bring that dimension to the target's size or to 1 first: slice or index the table to the positions used "
         "(pos.weight[:T], pos(torch.arange(T))), unsqueeze where a new axis is meant, or use repeat/tile to copy "
         "data; a (N, D) tensor expands to (B, N, D) only." + _RETRY, retry=False,
         aside_if=_under_bert_embeddings),
    # ATen's permute check (TensorShape.cpp, for dense tensors too despite its '(sparse_coo)'): "number of dimensions in
    # the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 4 is not
    # equal to len(dims) = 3".
    _sig("permute-dims-count",
         r"number of dimensions in the tensor input does not match the length of the desired ordering of dimensions "
         r"i\.e\. input\.dim\(\) = \d+ is not equal to len\(dims\) = \d+",
         "Tensor.permute was given an ordering of another length than the tensor's number of dimensions (the "
         "message gives both; its '(sparse_coo)' is only where torch checks it, any tensor gets it): a dimension "
         "left out of the ordering (NHWC to NCHW written permute(0, 3, 1)), or a tensor with one dimension more or "
         "less than the code expects (no batch dimension, an extra one).",
         "Name every dimension once in permute (permute(0, 3, 1, 2) for NHWC to NCHW), or swap two with "
         "transpose(a, b); check the tensor's ndim before (unsqueeze(0) a single sample)." + _RETRY, retry=False),
    # c10's maybe_wrap_dim (WrapDimUtils.h) on a 1-D tensor asked for dimension 1: "Dimension out of range (expected to
    # be in range of [-1, 0], but got 1)".
    _sig("dim-out-of-range-1d",
         r"Dimension out of range \(expected to be in range of \[-1, 0\], but got (?:1|-2)\)",
         "The code asks for dimension 1 (argmax(dim=1), softmax(dim=1), size(1)) of a tensor that has only one "
         "dimension. Most often a bare squeeze() that removed every dimension of size 1, the batch too when a batch "
         "holds one sample (the last, smaller batch of an epoch or shard; evaluation or inference one sample at a "
         "time); or one sample given without its batch dimension.",
         "Squeeze only the dimension meant (squeeze(1) or squeeze(-1), never a bare squeeze() on batched tensors), "
         "and keep the batch dimension on single samples (x.unsqueeze(0)); dim=-1 reads the last dimension at any "
         "rank." + _RETRY, retry=False),
)
