"""Round 197's rules (issue 45, live: normalization layers, buffers and running statistics under DDP): SyncBatchNorm
on CPU modules (syncbn-cpu), BatchNorm's batch of one value per channel in training mode (batchnorm-single-sample),
BatchNorm given its channels in another dimension (batchnorm-channels-mismatch), GroupNorm's groups not dividing its
channels (groupnorm-groups-not-dividing), LayerNorm's normalized_shape against another trailing size
(layernorm-shape-mismatch), an in-place update of a leaf that requires grad (leaf-inplace-requires-grad) and a
weights file with unexpected keys and nothing missing (ckpt-unexpected-keys-only). The cases' own logs, second
wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("syncbn-cpu", "batchnorm-single-sample", "batchnorm-channels-mismatch", "groupnorm-groups-not-dividing",
       "layernorm-shape-mismatch", "leaf-inplace-requires-grad", "ckpt-unexpected-keys-only")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-norm-syncbn-cpu-gloo", "syncbn-cpu"),
    ("live-norm-bn-last-batch-of-one", "batchnorm-single-sample"),
    ("live-norm-batchnorm1d-sequence-input", "batchnorm-channels-mismatch"),
    ("live-norm-groupnorm-args-swapped", "groupnorm-groups-not-dividing"),
    ("live-norm-layernorm-channels-first", "layernorm-shape-mismatch"),
    ("live-norm-running-stat-as-parameter", "leaf-inplace-requires-grad"),
    ("live-norm-nonpersistent-buffer-ckpt-key", "ckpt-unexpected-keys-only"),
    ("live-norm-buffer-inplace-after-use", "autograd-inplace"),
    ("live-norm-plain-attr-not-buffer-bf16", "dtype-mismatch"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'


@pytest.mark.parametrize("text, name", [
    # SyncBatchNorm.forward's own check on a CPU input (torch 2.x wording)
    (_TB + "ValueError: SyncBatchNorm expected input tensor to be on GPU or privateuseone\n", "syncbn-cpu"),
    (_TB + "ValueError: Expected more than 1 value per channel when training, got input size torch.Size([1, 256, 1, "
     "1])\n", "batchnorm-single-sample"),
    (_TB + "RuntimeError: running_var should contain 3 elements not 128\n", "batchnorm-channels-mismatch"),
    # torch 1.x GroupNorm, without the values
    (_TB + "ValueError: num_channels must be divisible by num_groups\n", "groupnorm-groups-not-dividing"),
    (_TB + "RuntimeError: Given normalized_shape=[768], expected input with shape [*, 768], but got input of "
     "size[2, 128, 1024]\n", "layernorm-shape-mismatch"),
    # a parameter updated by hand outside torch.no_grad()
    (_TB + "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.\n",
     "leaf-inplace-requires-grad"),
    (_TB + "RuntimeError: Error(s) in loading state_dict for BertModel:\n\tUnexpected key(s) in state_dict: "
     "\"embeddings.position_ids\". \n", "ckpt-unexpected-keys-only"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text", [
    # missing keys as well: the model is another one (or wrapped), not only extra entries in the file
    _TB + "RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"fc.weight\". "
    "\n\tUnexpected key(s) in state_dict: \"module.fc.weight\". \n",
    # unexpected keys and a size mismatch: another configuration
    _TB + "RuntimeError: Error(s) in loading state_dict for Net:\n\tUnexpected key(s) in state_dict: \"extra\". \n"
    "\tsize mismatch for fc.weight: copying a param with shape torch.Size([10, 32]) from checkpoint, the shape in "
    "current model is torch.Size([5, 32]).\n",
])
def test_other_state_dict_errors_stay_model_mismatch(text):
    assert sig(text) == "ckpt-model-mismatch"


@pytest.mark.parametrize("text", [
    # a tensor autograd saved, changed in place: not a leaf's own refusal
    _TB + "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.FloatTensor [16]] is at version 3; expected version 1 instead.\n",
    # a conv's channel mismatch, not BatchNorm's running statistics
    _TB + "RuntimeError: Given groups=1, weight of size [64, 3, 3, 3], expected input[8, 1, 32, 32] to have 3 "
    "channels, but got 1 channels instead\n",
])
def test_near_misses_stay_off(text):
    assert sig(text) not in NEW
