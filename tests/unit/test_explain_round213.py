"""Round 213's rules (issue 45, live: tensor indexing, gather / scatter, masking and top-k in the user's own code): a
-100 ignore label used as a gather index (gather-ignore-index), a scatter_add_ buffer of max-id rows
(index-out-of-bounds), index_add_ given more indices than source rows (index-add-count-mismatch), a fixed-length
boolean mask on dynamically padded logits (bool-mask-shape), masked_fill given an int64 mask (masked-fill-non-bool),
topk(5) over 4 classes (topk-k-out-of-range), one_hot of 1-based labels (one-hot-class-range), an indexed write of a
value broadcast by an earlier advanced index (index-put-shape-mismatch), float indices from linspace
(index-float-tensor) and a gather with unshifted labels (gather-index-size). The cases' own logs, second wordings and
near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("gather-ignore-index", "index-out-of-bounds", "index-add-count-mismatch", "bool-mask-shape",
       "masked-fill-non-bool", "topk-k-out-of-range", "one-hot-class-range", "index-put-shape-mismatch",
       "index-float-tensor", "gather-index-size")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-index-gather-ignore-label", "gather-ignore-index"),
    ("live-index-scatter-add-num-nodes", "index-out-of-bounds"),
    ("live-index-index-add-undirected", "index-add-count-mismatch"),
    ("live-index-bool-mask-fixed-len", "bool-mask-shape"),
    ("live-index-masked-fill-long-mask", "masked-fill-non-bool"),
    ("live-index-topk-k-classes", "topk-k-out-of-range"),
    ("live-index-one-hot-one-based", "one-hot-class-range"),
    ("live-index-put-broadcast-labels", "index-put-shape-mismatch"),
    ("live-index-float-frame-index", "index-float-tensor"),
    ("live-index-gather-unshifted-labels", "gather-index-size"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'


@pytest.mark.parametrize("text, name", [
    # a -1 padding label picked through tensor indexing
    (_TB + "IndexError: index -1000 is out of bounds for dimension 0 with size 512\n", "gather-ignore-index"),
    # index_copy_'s own wording, at the end of the buffer
    (_TB + "IndexError: index_copy_(): index 5 is out of bounds for dimension 0 with size 5\n", "index-out-of-bounds"),
    (_TB + "IndexError: index_copy_(): Number of indices (3) should be equal to source.size(dim) (2)\n",
     "index-add-count-mismatch"),
    (_TB + "RuntimeError: index_reduce_(): Number of indices (3) should be equal to source.size(dim): (2), "
           "for dim: 0\n", "index-add-count-mismatch"),
    (_TB + "RuntimeError: masked_fill_ only supports boolean masks, but got mask with dtype float\n",
     "masked-fill-non-bool"),
    (_TB + "RuntimeError: kthvalue(): selected number k out of range for dimension 1\n", "topk-k-out-of-range"),
    (_TB + "RuntimeError: Class values must be non-negative.\n", "one-hot-class-range"),
    (_TB + "RuntimeError: index_select(): Expected dtype int32 or int64 for index\n", "index-float-tensor"),
    (_TB + "RuntimeError: gather(): Expected dtype int32/int64 for index\n", "index-float-tensor"),
    (_TB + "RuntimeError: Expected index [16, 10] to be no larger than self [8, 10] apart from dimension 0 and to be "
           "no larger size than src [8, 10]\n", "gather-index-size"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # an empty tensor (a ZeRO-3 placeholder) indexed: size 0 is another cause
    (_TB + "IndexError: index 99 is out of bounds for dimension 0 with size 0\n", "index-out-of-bounds"),
    (_TB + "IndexError: index -1 is out of bounds for dimension 0 with size 0\n", "gather-ignore-index"),
    # an embedding lookup past its table: not these kernels' words
    (_TB + "IndexError: index out of range in self\n", "index-out-of-bounds"),
    # the index tensors broadcast against each other, not a value against the selection
    (_TB + "IndexError: shape mismatch: indexing tensors could not be broadcast together with shapes [8], [4]\n",
     "index-put-shape-mismatch"),
    # one_hot given a float tensor: its dtype, not a class out of range
    (_TB + "RuntimeError: one_hot is only applicable to index tensor of type LongTensor.\n", "one-hot-class-range"),
    # a gather index of fewer dimensions: gather-index-dims' words
    (_TB + "RuntimeError: Index tensor must have the same number of dimensions as input tensor\n",
     "gather-index-size"),
    # masked_fill's mask of the wrong length broadcasts: a size mismatch, not a dtype
    (_TB + "RuntimeError: The size of tensor a (7) must match the size of tensor b (8) at non-singleton dimension 1\n",
     "masked-fill-non-bool"),
])
def test_near_misses(text, name):
    assert sig(text) != name
