"""Round 191's rules (issue 45, live: sparse gradients, embeddings and mixture-of-experts layers in distributed
training): a dense optimizer refusing an nn.Embedding(sparse=True)'s gradient (sparse-grad-optimizer), ZeRO's dense
buckets meeting one (zero-sparse-grad), padding_idx past the table (embedding-padding-idx), nn.EmbeddingBag's offsets
and per-sample weights (embedding-bag-offsets, embedding-bag-weights-mode), DeepSpeed MoE's expert count and param
groups (ds-moe-num-experts, ds-moe-param-groups), a layer's tuple output used as a tensor (tuple-as-tensor) and
torch.gather's index of another rank (gather-index-dims). Second wordings (other versions', callers' and values'
words) and near misses that must stay off them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("sparse-grad-optimizer", "zero-sparse-grad", "embedding-padding-idx", "embedding-bag-offsets",
       "embedding-bag-weights-mode", "ds-moe-num-experts", "ds-moe-param-groups", "tuple-as-tensor",
       "gather-index-dims")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_ZERO = ('  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 1342, in '
         'reduce_independent_p_g_buckets_and_remove_grads\n'
         "    new_grad_tensor.copy_(grad_reduc.view(-1))\n")


@pytest.mark.parametrize("text, name", [
    # DeepSpeed's FusedAdam on GPU, same advice
    (_TB + "RuntimeError: FusedAdam does not support sparse gradients, please consider SparseAdam instead\n",
     "sparse-grad-optimizer"),
    # torch 1.x's AdamW (its own class then) and RMSprop, ranks' prefixes
    ("[rank1]: RuntimeError: AdamW does not support sparse gradients, please consider SparseAdam instead\n",
     "sparse-grad-optimizer"),
    ("RuntimeError: RMSprop does not support sparse gradients\n", "sparse-grad-optimizer"),
    # ZeRO-1/2 on GPU: the copy into the flat buffer, SparseCUDA
    (_TB + _ZERO + "NotImplementedError: Could not run 'aten::view' with arguments from the 'SparseCUDA' backend. This "
     "could be because the operator doesn't exist for this backend\n", "zero-sparse-grad"),
    # F.embedding called directly with a negative padding_idx past the table
    (_TB + '  File "/usr/lib/python3/dist-packages/torch/nn/functional.py", line 2233, in embedding\n'
     '    assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"\n'
     "AssertionError: Padding_idx must be within num_embeddings\n", "embedding-padding-idx"),
    # offsets built as the running sum with the total appended, no include_last_offset
    (_TB + "RuntimeError: offsets[-1] can not be greater than input's length 40, but got offsets[-1] of 57\n",
     "embedding-bag-offsets"),
    # ATen's wording (older torch) for per-sample weights in max mode
    (_TB + "RuntimeError: embedding_bag: per_sample_weights only supported with mode='sum'\n",
     "embedding-bag-weights-mode"),
    ("[rank3]: AssertionError: Number of experts (6) should be divisible by expert parallel size (4)\n",
     "ds-moe-num-experts"),
    # a moe group that also holds dense parameters
    (_TB + "AssertionError: All params in MoE group must be MoE params\n", "ds-moe-param-groups"),
    # MoE's tuple fed to the next Linear; an LSTM's output multiplied
    (_TB + "TypeError: linear(): argument 'input' (position 1) must be Tensor, not tuple\n", "tuple-as-tensor"),
    (_TB + "TypeError: unsupported operand type(s) for *: 'tuple' and 'Tensor'\n", "tuple-as-tensor"),
    # scatter_add_ with an index of another rank
    (_TB + "RuntimeError: Index tensor must have the same number of dimensions as self tensor\n", "gather-index-dims"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # SparseAdam given a dense gradient: the other way round
    (_TB + "RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead\n",
     "sparse-grad-optimizer"),
    # a sparse tensor viewed in the script's own code, no ZeRO frame
    (_TB + '  File "train.py", line 12, in forward\n    return x.view(-1)\n'
     "NotImplementedError: Could not run 'aten::view' with arguments from the 'SparseCPU' backend.\n",
     "zero-sparse-grad"),
    # a token id past the table (not the padding_idx): embedding-index's
    (_TB + "IndexError: index out of range in self\n", "embedding-padding-idx"),
    # EmbeddingBag given a 3-D input
    (_TB + "ValueError: input has to be 1D or 2D Tensor, but got Tensor of dimension 3\n", "embedding-bag-offsets"),
    # the expert-parallel size not dividing the world (ds-moe-ep-size's family), not the experts
    (_TB + "AssertionError: Reduce Scatter in ZeRO Stage 2 must be set to True for MoE. Other code paths are not "
     "tested with MoE\n", "ds-moe-param-groups"),
    (_TB + "AssertionError: num_experts (3) must be divisible by world size (2)\n", "ds-moe-num-experts"),
    # None, not a tuple, added to a tensor
    (_TB + "TypeError: unsupported operand type(s) for +: 'Tensor' and 'NoneType'\n", "tuple-as-tensor"),
    # gather's index of the right rank but too large a size
    (_TB + "RuntimeError: Size does not match at dimension 1 expected index [64, 2, 32] to be smaller than self "
     "[64, 1, 32] apart from dimension 2\n", "gather-index-dims"),
])
def test_near_misses(text, name):
    assert sig(text) != name
