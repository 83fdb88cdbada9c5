"""Round 221's rules (issue 45, live: tensor shape manipulation in the user's model code): a view to the configured
batch size on a smaller batch (view-batch-size-hardcoded), an einsum equation whose
subscripts do not fit an operand (einsum-subscripts-dims), torch.cat of tensors that differ outside the joined dimension
(cat-sizes-differ), torch.stack of per-batch results of other sizes (stack-unequal-size), split sizes that do not add up
(split-sizes-sum), expand on a dimension that is not 1 (expand-non-singleton), a permute ordering of another length
(permute-dims-count), dimension 1 of a 1-D tensor after a bare squeeze() (dim-out-of-range-1d). A view after a transpose
is view-non-contiguous (sigvision). The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("view-batch-size-hardcoded", "einsum-subscripts-dims", "cat-sizes-differ",
       "stack-unequal-size", "split-sizes-sum", "expand-non-singleton", "permute-dims-count", "dim-out-of-range-1d")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW)
    assert "cls_token.expand" in by_name["cat-sizes-differ"].fix
    assert "squeeze(1)" in by_name["dim-out-of-range-1d"].fix


@pytest.mark.parametrize("case, name", [
    ("live-shape-view-merge-heads", "view-non-contiguous"),
    ("live-shape-view-fixed-batch", "view-batch-size-hardcoded"),
    ("live-shape-einsum-operand-dims", "einsum-subscripts-dims"),
    ("live-shape-cat-cls-token", "cat-sizes-differ"),
    ("live-shape-stack-eval-batches", "stack-unequal-size"),
    ("live-shape-squeeze-batch-of-one", "dim-out-of-range-1d"),
    ("live-shape-split-qkv-sizes", "split-sizes-sum"),
    ("live-shape-expand-pos-table", "expand-non-singleton"),
    ("live-shape-permute-missing-dim", "permute-dims-count"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = ('Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
       '  File "train.py", line 31, in forward\n    x = f(x)\n')


@pytest.mark.parametrize("text, name", [
    # reshape with the batch size and a -1 elsewhere: still whole rows of the other sizes
    (_TB + "RuntimeError: shape '[64, 3, 32, 32]' is invalid for input of size 49152\n", "view-batch-size-hardcoded"),
    (_TB + "RuntimeError: Sizes of tensors must match except in dimension 2. Expected size 16 but got size 15 for "
           "tensor number 1 in the list.\n", "cat-sizes-differ"),
    (_TB + "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got -2)\n",
     "dim-out-of-range-1d"),
    (_TB + "RuntimeError: permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
           "the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 4\n",
     "permute-dims-count"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # stacked by the DataLoader's default collate: the padding collate's signature, not a loop's stack
    ('Traceback (most recent call last):\n  File "/opt/torch/utils/data/_utils/collate.py", line 272, in '
     "collate_tensor_fn\n    return torch.stack(batch, 0, out=out)\n"
     "RuntimeError: stack expects each tensor to be equal size, but got [12] at entry 0 and [9] at entry 1\n",
     "stack-unequal-size"),
    # a U-Net's skip connection one pixel apart: the vision signature
    (_TB + "RuntimeError: Sizes of tensors must match except in dimension 1. Expected size 14 but got size 15 for "
           "tensor number 1 in the list.\n", "cat-sizes-differ"),
    # a head split whose sizes after the first do not divide the input: not a batch size
    (_TB + "RuntimeError: shape '[8, 16, 12, 64]' is invalid for input of size 65536\n", "view-batch-size-hardcoded"),
    # a -1 in the shape (Open-Sora's kv view): no batch size to read
    (_TB + "RuntimeError: shape '[24, -1, 2, 16, 72]' is invalid for input of size 6301440\n",
     "view-batch-size-hardcoded"),
    # a 2-D tensor asked for dimension 2 is another range
    (_TB + "IndexError: Dimension out of range (expected to be in range of [-2, 1], but got 2)\n",
     "dim-out-of-range-1d"),
])
def test_near_misses(text, name):
    assert sig(text) != name
