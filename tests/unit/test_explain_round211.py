"""Round 211's rules (issue 45, live: contrastive and retrieval training across ranks): the autograd all_gather of
torch.distributed.nn.functional called with c10d's output list (dist-nn-all-gather-list-arg), and the general
signatures whose causes now name the contrastive forms (a loss built only from dist.all_gather's copies, labels offset
by rank against a local similarity matrix, gathered queries against local labels). The cases' own logs, second
wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("dist-nn-all-gather-list-arg",)
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    by_name = translated_and_final(NEW + ("loss-no-grad", "loss-target-out-of-bounds", "loss-target-batch-mismatch"))
    assert "torch.distributed.all_gather" in by_name["loss-no-grad"].cause
    assert "offset by rank" in by_name["loss-target-out-of-bounds"].cause
    assert "gathered queries" in by_name["loss-target-batch-mismatch"].cause


@pytest.mark.parametrize("case, name", [
    ("live-contrastive-gathered-loss-no-grad", "loss-no-grad"),
    ("live-contrastive-labels-offset-local-logits", "loss-target-out-of-bounds"),
    ("live-contrastive-sim-global-by-local-labels", "loss-target-batch-mismatch"),
    ("live-contrastive-logit-scale-clamp-inplace", "leaf-inplace-requires-grad"),
    ("live-contrastive-normalize-inplace-div", "autograd-inplace"),
    ("live-contrastive-dist-nn-gather-c10d-call", "dist-nn-all-gather-list-arg"),
    ("live-contrastive-dist-nn-gather-last-batch", "collective-mismatch"),
    ("live-contrastive-hard-negatives-rank0-gather", "collective-mismatch"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_NN = "/usr/lib/python3/dist-packages/torch/distributed/nn/functional.py"


@pytest.mark.parametrize("text, name", [
    # an older Python (no caret lines), a tuple of outputs given first
    (_TB + f'  File "{_NN}", line 160, in all_gather\n    return _AllGather.apply(group, tensor)\n'
     f'  File "{_NN}", line 330, in forward\n    tensor = tensor.contiguous()\n'
     "AttributeError: 'tuple' object has no attribute 'contiguous'\n", "dist-nn-all-gather-list-arg"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # the user's own .contiguous() on a list, not the autograd collective's
    (_TB + '  File "train.py", line 22, in forward\n    x = feats.contiguous()\n'
     "AttributeError: 'list' object has no attribute 'contiguous'\n", "dist-nn-all-gather-list-arg"),
    # c10d's all_gather given a list where the tensor goes: another message, another mistake
    (_TB + '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 3790, in all_gather\n'
     '    _check_single_tensor(tensor, "tensor")\n'
     "TypeError: Invalid function argument. Expected parameter `tensor` of type torch.Tensor\n"
     "             but got <class 'list'> instead.\n", "dist-nn-all-gather-list-arg"),
])
def test_near_misses(text, name):
    assert sig(text) != name
