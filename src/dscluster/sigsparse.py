"""Failure signatures of sparse gradients, embedding tables and mixture-of-experts layers, from round 191 of issue 45
(live: broken users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8): an optimizer that refuses the sparse
gradients of an nn.Embedding(sparse=True), ZeRO's dense gradient buckets meeting one, an embedding's padding_idx past
its table, nn.EmbeddingBag's offsets and per-sample weights, DeepSpeed's MoE layer's expert count and optimizer
param groups, a layer's tuple output used as a tensor, and torch.gather's index of another rank than its input. Each
pattern is the wording of the component that prints it (torch/optim's _single_tensor_* refusals, ATen's dispatcher,
torch/nn/modules/sparse.py and nn/functional.py, ATen's EmbeddingBag.cpp and ScatterGatherChecks.h, DeepSpeed's
moe/layer.py and runtime/zero/stage_1_and_2.py, CPython's binary-operator TypeError), never one log's. sigrounds.py
places this table just before the exception messages' (sigmessages.py)."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

SPARSE_SIGNATURES: tuple[Signature, ...] = (
    # torch/optim's dense optimizers (adam.py, adamw.py before 2.x made it Adam's subclass, rmsprop.py, adadelta.py,
    # adamax.py, nadam.py, radam.py; DeepSpeed's FusedAdam/FusedLamb; apex's) refuse a sparse gradient by name:
    # "Adam does not support sparse gradients, please consider SparseAdam instead". Named optimizers only: "This
    # optimizer does not support sparse gradients" stays the generic refusal's (refusals.py).
    _sig("sparse-grad-optimizer", r"(?P<ev>(?<!\w)(?!optimizer\b)[a-z]\w* does not support sparse gradients\b[^\n]{0,80})",
         "The optimizer got a sparse gradient and refuses it: an nn.Embedding or nn.EmbeddingBag built with "
         "sparse=True gives its weight a sparse gradient, and Adam/AdamW (and the other dense optimizers: RMSprop, "
         "Adadelta, NAdam, DeepSpeed's FusedAdam) only take dense ones.",
         "Build the embedding with sparse=False (the default), or give its parameters an optimizer that takes sparse "
         "gradients (torch.optim.SparseAdam, SGD or Adagrad) and the rest of the model Adam/AdamW in a second "
         "optimizer. A restart fails the same way.", retry=False),
    # ZeRO stage 1/2 flattens each gradient into its dense buckets (stage_1_and_2.py: grad_reduc.view(-1), the
    # partition copies); a sparse gradient has no strides, so ATen's dispatcher refuses the op for the Sparse
    # backend: "Could not run 'aten::view' with arguments from the 'SparseCPU' backend". Only under ZeRO's frames.
    _sig("zero-sparse-grad", r"deepspeed[/\\]runtime[/\\]zero[/\\]\w+\.py\", line \d+, in \w+\n(?:[^\n]{0,300}\n){0,12}?"
         r"[^\n]{0,80}?(?P<ev>Could not run 'aten::\w+' with arguments from the 'Sparse(?:CPU|CUDA|Meta|XPU)' "
         r"backend)",
         "DeepSpeed's ZeRO optimizer met a sparse gradient: an nn.Embedding or nn.EmbeddingBag built with sparse=True "
         "gives its weight a sparse gradient, and ZeRO flattens every gradient into dense buckets to reduce and "
         "partition it, which a sparse tensor cannot do.",
         "Build the embedding with sparse=False (the default) under ZeRO; sparse embedding gradients are reduced "
         "sparsely only without ZeRO (zero_optimization stage 0), and DeepSpeed 0.19.8 needs no sparse_gradients "
         "flag for them. A restart fails the same way.", retry=False),
    # torch/nn/modules/sparse.py (Embedding, EmbeddingBag) and nn/functional.py (embedding): "Padding_idx must be
    # within num_embeddings" (a padding_idx >= num_embeddings, or below -num_embeddings).
    _sig("embedding-padding-idx", r"(?P<ev>Padding_idx must be within num_embeddings)",
         "An embedding's padding_idx is outside its table: it must be below num_embeddings (or from -num_embeddings "
         "up, counted from the end). A pad id appended after the vocabulary (pad_id = len(vocab)) or a tokenizer's "
         "pad_token_id past the model's vocab_size is one row too far.",
         "Make the table hold the pad row (num_embeddings = len(vocab) + 1, or the tokenizer's len() after adding "
         "the pad token), or give the pad a row inside the table (0, or an id the vocabulary reserves); the ids fed "
         "to the model must stay below num_embeddings too. A restart fails the same way.", retry=False),
    # ATen's EmbeddingBag.cpp (check_arguments / _embedding_bag_cpu_impl_out, and its CUDA twin): the offsets are
    # the start of each bag in the flat input, so offsets[0] must be 0 and none may pass the input's length.
    _sig("embedding-bag-offsets", r"(?P<ev>offsets\[0\] has to be 0, i\.e\., the first sequence in the mini-batch has "
         r"to start from position 0[^\n]{0,60}|offsets\[-1\] can not be greater than input's length[^\n]{0,80})",
         "nn.EmbeddingBag (F.embedding_bag) was given offsets that are not the bags' start positions in the flat "
         "input: they must start at 0 and rise to at most the input's length (the bags' lengths, or their running "
         "sum including the total, are not offsets).",
         "Pass each bag's start: offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)[:-1]]) (or "
         "include_last_offset=True with the total appended), or give a 2-D input of equal-length bags and no "
         "offsets. A restart fails the same way.", retry=False),
    # torch/nn/functional.py embedding_bag: "embedding_bag: per_sample_weights was not None. per_sample_weights is only
    # supported for mode='sum' (got mode='mean')"; ATen's "embedding_bag: per_sample_weights only supported with
    # mode='sum'".
    _sig("embedding-bag-weights-mode", r"(?P<ev>per_sample_weights (?:is )?only supported (?:for|with) mode='sum'"
         r"[^\n]{0,40})",
         "nn.EmbeddingBag (F.embedding_bag) was given per_sample_weights in mode 'mean' or 'max': only mode='sum' "
         "weighs each index's row.",
         "Use mode='sum' with the weights, and for a weighted mean divide the weights by their bag's sum first; or "
         "drop per_sample_weights for an unweighted mean. A restart fails the same way.", retry=False),
    # DeepSpeed's moe/layer.py MoE.__init__: "Number of experts (3) should be divisible by expert parallel size (2)".
    _sig("ds-moe-num-experts", r"(?P<ev>Number of experts \(\d+\) should be divisible by expert parallel size "
         r"\(\d+\))",
         "DeepSpeed's MoE layer got a num_experts that its ep_size (the expert-parallel size) does not divide: each "
         "expert-parallel rank holds num_experts / ep_size experts, so they must split evenly.",
         "Choose num_experts as a multiple of ep_size (ep_size 2 and 4 experts), or an ep_size that divides it (1 "
         "keeps every expert on every rank); ep_size must also divide the world size. A restart fails the same "
         "way.", retry=False),
    # DeepSpeed's runtime/zero/stage_1_and_2.py _configure_moe_settings: a MoE model's optimizer built by the script
    # from model.parameters(), so no param group is marked moe ("The model has moe layers, but None of the param
    # groups are marked as MoE. Create a param group with 'moe' key set to True before creating optimizer").
    _sig("ds-moe-param-groups", r"(?P<ev>The model has moe layers, but None of the param groups are marked as MoE"
         r"[^\n]{0,120}|All params in MoE group must be MoE params)",
         "ZeRO was given an optimizer for a model with DeepSpeed MoE layers whose param groups do not keep the "
         "expert parameters apart: the experts are reduced over the expert-data-parallel group, the rest over the "
         "data-parallel one, so ZeRO needs the experts in their own groups marked 'moe'.",
         "Split the param groups before building the optimizer: from deepspeed.moe.utils import "
         "split_params_into_different_moe_groups_for_optimizer; optimizer = torch.optim.AdamW("
         "split_params_into_different_moe_groups_for_optimizer({'params': model.parameters(), 'name': 'params'}), "
         "...); or leave the optimizer to ds_config's \"optimizer\" block, which splits them itself. A restart fails "
         "the same way.", retry=False),
    # CPython's binary-operator TypeError with a tuple on one side of a tensor, and torch's argument parser refusing a
    # tuple where an op takes a tensor ("linear(): argument 'input' (position 1) must be Tensor, not tuple").
    _sig("tuple-as-tensor", r"(?P<ev>unsupported operand type\(s\) for [^:\n]{1,3}: '(?:Tensor' and 'tuple|tuple' and "
         r"'Tensor)'|(?<!\w)\w+\(\): argument '\w+' \(position \d+\) must be Tensor, not tuple)",
         "A tuple was used where a tensor was expected: a layer returns several values, not one tensor (DeepSpeed's "
         "MoE layer returns (output, l_aux, exp_counts), nn.LSTM/GRU (output, state), nn.MultiheadAttention "
         "(output, weights), a Hugging Face model with return_dict=False its outputs), and the script used the whole "
         "tuple.",
         "Unpack the layer's output and use the tensor: out, l_aux, _ = self.moe(x) (add the MoE's l_aux, scaled, to "
         "the loss), out, _ = self.lstm(x). A restart fails the same way.", retry=False),
    # ATen's ScatterGatherChecks.h gather_shape_check / scatter_gather_dtype_check's neighbours: torch.gather,
    # scatter, scatter_add take an index with as many dimensions as the input.
    _sig("gather-index-dims", r"(?P<ev>Index tensor must have the same number of dimensions as (?:input|self|src|out) "
         r"tensor)",
         "torch.gather (or scatter/scatter_add) got an index with fewer or more dimensions than the tensor it "
         "indexes: the index must have the input's number of dimensions, each no larger than the input's except "
         "along dim (a top-k routing's [tokens, k] index gathering from [tokens, experts, hidden] outputs).",
         "Give the index the input's rank: index.unsqueeze(-1).expand(-1, -1, hidden) to gather whole rows, or use "
         "advanced indexing (out[torch.arange(T)[:, None], idx]). A restart fails the same way.", retry=False),
)
