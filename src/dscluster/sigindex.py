"""Failure signatures of tensor indexing in the user's own code, from round 213 of issue 45 (live: broken users' scripts
run for real on torch 2.13 under DDP, gloo): gather / scatter_add_ / index_add_ given an index out of the tensor's
range (a -100 ignore label, a buffer of max-id rows), an index of another length than the source, a boolean mask of
another shape than the tensor it selects from, masked_fill given an integer mask, topk asked for more than the
dimension holds, one_hot given a class at or past num_classes, an indexed write whose value broadcast earlier, a float
index tensor and a gather index larger than its input. Each pattern is the wording of torch's own checks (ATen's
scatter_gather_checks, index_add / index_copy / index_reduce, TensorAdvancedIndexing, the boolean mask and index_put
checks, masked_fill, topk / kthvalue, one_hot), never one log's. sigrounds.py places this table with the other round
tables, before the exception messages' (sigmessages.py) and the generic refusals (refusals.py), which read
"only supports", "must be" and "should be" in these messages as a version's or a setup's refusal."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

_SHAPE = r"\[[\d, ]{0,80}\]"

INDEX_SIGNATURES: tuple[Signature, ...] = (
    # ATen's scatter_gather index check (gather, scatter_, scatter_add_, scatter_reduce_, take_along_dim) and
    # index_add_'s, as RuntimeError; tensor indexing's as IndexError: "index -100 is out of bounds for dimension 2 with
    # size 15". A negative index never wraps around in the kernels. Size 0 (an empty tensor, a ZeRO-3 placeholder) is
    # another cause.
    _sig("gather-ignore-index",
         r"(?:RuntimeError|IndexError): index -\d+ is out of bounds for dimension \d+ with size (?!0\b)\d+",
         "A gather or scatter (torch.gather, take_along_dim, scatter_ / scatter_add_, index_add_) or a tensor index "
         "got a negative index, which the kernels never wrap around (tensor indexing wraps only down to -size): most "
         "often the labels' ignore value, -100 (the ignore_index "
         "of cross_entropy that transformers' DataCollatorForLanguageModeling, DataCollatorForSeq2Seq and "
         "DataCollatorForTokenClassification put at padded and masked positions) or a -1 padding, is used as a token "
         "or class index to pick per-token log-probabilities or scores.",
         "Replace the ignored positions before the pick and mask them out after it: valid = labels != -100; "
         "token_logp = logp.gather(-1, labels.masked_fill(~valid, 0).unsqueeze(-1)).squeeze(-1) * valid; or compute "
         "-F.cross_entropy(logits.transpose(1, 2), labels, reduction='none'), which honours ignore_index. A restart "
         "fails the same way.", retry=False),
    # The same checks with an index at or past the end: "index 29 is out of bounds for dimension 0 with size 29"
    # (index_copy_'s with its name before it).
    _sig("index-out-of-bounds",
         r"(?:RuntimeError|IndexError): (?:index_copy_\(\): )?index \d+ is out of bounds for dimension \d+ with size "
         r"(?!0\b)\d+",
         "An index tensor holds a value at least as large as the dimension it indexes (gather, scatter_add_ / "
         "scatter_, index_add_ / index_copy_, or tensor indexing): the buffer an aggregation writes into was made too "
         "small (edge_index.max() rows where the node count is max + 1, the node count of one graph for a batch of "
         "graphs, a class count smaller than the labels), or the ids are 1-based or belong to another tensor (a "
         "global id used on a rank's local shard).",
         "Size the target by the number of items, not the largest id: num_nodes = x.size(0) (or int(index.max()) + 1), "
         "num_classes = the true class count; offset each graph's edge ids by the nodes before it when batching, "
         "shift 1-based ids by one, and check index.min() >= 0 and index.max() < size before the call. A restart "
         "fails the same way.", retry=False),
    # ATen's index_add_ / index_copy_ / index_reduce_: "index_add_(): Number of indices (240) should be equal to
    # source.size(dim): (120), for dim: 0".
    _sig("index-add-count-mismatch",
         r"index_(?:add|copy|reduce|fill)_\(\): Number of indices \(\d+\) should be equal to (?:source|self)\.size",
         "index_add_ (or index_copy_ / index_reduce_) got an index of another length than the source's rows along "
         "dim: every source row needs exactly one destination index. Typically the index and the source were built "
         "from different lists, such as an edge list made undirected (reversed edges concatenated) in the "
         "destination index only while the messages come from the one-way edges, or a mask / filter applied to one "
         "of them.",
         "Build the index and the source from the same rows: concatenate the reversed edges into the edge list first "
         "(edge_index = torch.cat([edge_index, edge_index.flip(0)], 1)), then compute src, dst and the messages from "
         "it; apply any filter to both; check index.numel() == source.size(dim). A restart fails the same way.",
         retry=False),
    # TensorAdvancedIndexing's boolean mask check: "The shape of the mask [8, 48] at index 1 does not match the shape
    # of the indexed tensor [8, 29, 9] at index 1".
    _sig("bool-mask-shape",
         rf"The shape of the mask {_SHAPE} at index \d+ does not match the shape of the indexed tensor",
         "A boolean mask used to select from a tensor (x[mask]) has another size than the tensor in the dimension "
         "named: the mask was built to a fixed length (a configured max_len / max_length) while the batch is padded "
         "to its own longest sequence (or truncated), or it was not shifted or sliced the way the tensor was "
         "(logits[:, :-1] against the full mask), or it comes from another batch or another tensor.",
         "Build the mask from the tensor it selects from: mask = torch.arange(x.size(1)) < lengths[:, None], or "
         "slice it the same way (mask[:, 1:] for shifted logits, mask[:, :x.size(1)]); pad every batch to one fixed "
         "length in the collate function if a fixed width is meant. A restart fails the same way.", retry=False),
    # masked_fill's dtype check: "masked_fill_ only supports boolean masks, but got mask with dtype long int".
    _sig("masked-fill-non-bool",
         r"masked_fill_? only supports boolean masks, but got mask with dtype",
         "masked_fill (Tensor.masked_fill / masked_fill_) was given a mask of integers or floats: torch takes only a "
         "bool mask, True where the value is written. A tokenizer's int64 attention_mask (1 = real token), its "
         "inverse written 1 - attention_mask, or a float 0/1 mask is not one; this is not an unsupported version or "
         "dtype of the data.",
         "Turn the mask into bool with the meaning masked_fill needs (True = fill): scores.masked_fill(attention_mask "
         "== 0, float('-inf')) or ~attention_mask.bool(), never 1 - mask. A restart fails the same way.", retry=False),
    # ATen's topk / kthvalue range checks: "selected index k out of range", "kthvalue(): selected number k out of
    # range for dimension 1".
    _sig("topk-k-out-of-range",
         r"selected index k out of range|kthvalue\(\): selected number k out of range",
         "topk (or kthvalue) was asked for k larger than the size of the dimension it selects along (or a negative "
         "k): a top-5 accuracy on a model with fewer than 5 classes, top-k sampling with k above the vocabulary, a k "
         "from the config larger than the candidates of a small or last batch, or topk along the wrong dim.",
         "Bound k by the dimension: k = min(k, x.size(dim)); call the accuracy helper with topk=(1,) or "
         "(1, min(5, num_classes)); check that dim is the one holding the classes or candidates. A restart fails the "
         "same way.", retry=False),
    # one_hot's checks: "Class values must be smaller than num_classes." / "Class values must be non-negative."
    _sig("one-hot-class-range",
         r"Class values must be (?:smaller than num_classes|non-negative)",
         "F.one_hot got a class index outside 0 .. num_classes - 1: labels numbered from 1 (1..C, as many annotation "
         "tools and CSV exports write them), a num_classes smaller than the labels' range (taken from a subset or "
         "from one batch's labels.max()), or -100 / -1 ignore labels.",
         "Give one_hot 0-based labels and the full class count: labels - 1 for 1-based labels, num_classes = the "
         "number of classes of the whole dataset; replace ignore labels before one_hot (labels.clamp(min=0)) and "
         "zero their rows after. A restart fails the same way.", retry=False),
    # index_put's check: "shape mismatch: value tensor of shape [8, 8] cannot be broadcast to indexing result of shape
    # [8]".
    _sig("index-put-shape-mismatch",
         rf"shape mismatch: value tensor of shape {_SHAPE} cannot be broadcast to indexing result of shape",
         "An indexed write (t[idx] = value, index_put_) got a value that does not fit the elements selected: often "
         "the value came out of an earlier advanced index that broadcast without error, such as "
         "logp[torch.arange(B), y] with labels y shaped [B, 1] (a label column, keepdim) giving [B, B] rather than "
         "[B], so the loss computed from it was wrong too; or the value keeps an extra dimension.",
         "Make the value the shape of the selection where it is made: flatten the labels before picking "
         "(y = y.view(-1), or logp.gather(1, y.view(-1, 1)).squeeze(1)), and compare value.shape with t[idx].shape. "
         "A restart fails the same way.", retry=False),
    # Tensor indexing's dtype check and the kernels' index dtype checks: "tensors used as indices must be long, int,
    # byte or bool tensors", "index_select(): Expected dtype int32 or int64 for index", "gather(): Expected dtype
    # int32/int64 for index", "index_add_(): Expected dtype int32/int64 for index but got: Float".
    _sig("index-float-tensor",
         r"tensors used as indices must be long, int, byte or bool tensors|"
         r"\b(?:gather|scatter\w{0,8}|index_\w{3,8}|take_along_dim)\(\): Expected dtype int32(?:/| or )int64 for index",
         "A floating-point tensor was used as an index (x[idx], index_select, gather, index_add_): the indices were "
         "computed with torch.linspace, true division `/` (float even for integers), torch.round / floor (which keep "
         "the float dtype), or read as floats (a numpy float array, a float label column).",
         "Convert the index to integers where it is made: torch.linspace(0, T - 1, n).round().long(), `//` instead "
         "of `/`, idx.long() for labels read as floats. A restart fails the same way.", retry=False),
    # ATen's scatter_gather shape check: "Size does not match at dimension 1 expected index [4, 33, 1] to be no larger
    # than self [4, 32, 100] apart from dimension 2", scatter's "Expected index [16, 10] to be no larger than self
    # [8, 10] apart from dimension 0 and to be no larger size than src [8, 10]".
    _sig("gather-index-size",
         rf"expected index {_SHAPE} to be no larger than self {_SHAPE} apart from dimension",
         "torch.gather (or scatter / scatter_add_) got an index larger than the input in a dimension other than dim: "
         "the labels were not shifted the way the logits were (log-probs of logits from input_ids[:, :-1] gathered "
         "with the whole input_ids), the index holds the whole batch (gathered from every rank) against a rank's "
         "local tensor, or the index was expanded to the wrong size.",
         "Make the index match the input in every dimension but dim: shift it like the logits (logp[:, :-1] with "
         "input_ids[:, 1:]), use the rank's own labels with its own outputs, and check index.shape against "
         "input.shape. A restart fails the same way.", retry=False),
)
