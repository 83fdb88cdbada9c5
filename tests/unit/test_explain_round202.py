"""Round 202's rules (issue 45, live: loss functions' contracts broken in the user's own training code under DDP):
(batch, seq, vocab) logits to cross_entropy unflattened (loss-ce-target-size), one-hot integer labels read as class
probabilities (loss-ce-onehot-target), binary cross-entropy targets of another shape (loss-bce-target-size) or an
integer dtype (loss-bce-target-dtype), BCELoss on logits (loss-bce-input-range), a regression loss's broadcasting
warning raised as an error (loss-target-size-warning), CTC lengths past the tensors (ctc-lengths), a non-scalar loss to
backward (backward-not-scalar) and class weights of the wrong length (loss-class-weight-size). The cases' own logs,
second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("loss-ce-target-size", "loss-ce-onehot-target", "loss-bce-target-size", "loss-bce-target-dtype",
       "loss-bce-input-range", "loss-target-size-warning", "ctc-lengths", "backward-not-scalar",
       "loss-class-weight-size")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-loss-ce-btv-unflattened", "loss-ce-target-size"),
    ("live-loss-ce-onehot-long-targets", "loss-ce-onehot-target"),
    ("live-loss-ce-ignore-index-pad-mismatch", "loss-target-out-of-bounds"),
    ("live-loss-bcewithlogits-target-shape", "loss-bce-target-size"),
    ("live-loss-bcewithlogits-long-targets", "loss-bce-target-dtype"),
    ("live-loss-bce-on-raw-logits", "loss-bce-input-range"),
    ("live-loss-mse-broadcast-warning-error", "loss-target-size-warning"),
    ("live-loss-ctc-input-lengths-before-subsampling", "ctc-lengths"),
    ("live-loss-nonscalar-backward-weighted", "backward-not-scalar"),
    ("live-loss-ce-class-weight-missing-classes", "loss-class-weight-size"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_F = "/usr/local/lib/python3.10/dist-packages/torch/nn/functional.py"


@pytest.mark.parametrize("text, name", [
    # nll_loss on a segmentation map of another size
    (_TB + "RuntimeError: Expected target size [8, 128, 128], got [8, 64, 64]\n", "loss-ce-target-size"),
    # a bool multi-hot matrix to cross_entropy
    (_TB + "RuntimeError: Expected floating point type for target with class probabilities, got Bool\n",
     "loss-ce-onehot-target"),
    # F.binary_cross_entropy with (N,) probabilities against (N, 1) targets
    (_TB + "ValueError: Target size (torch.Size([32, 1])) must be the same as input size (torch.Size([32]))\n",
     "loss-bce-target-size"),
    # functional call with int32 targets
    (_TB + f'  File "{_F}", line 3197, in binary_cross_entropy_with_logits\n'
     "    return torch.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)\n"
     "RuntimeError: result type Float can't be cast to the desired output type Int\n", "loss-bce-target-dtype"),
    # CUDA's kernel assertion of BCELoss
    ("/pytorch/aten/src/ATen/native/cuda/Loss.cu:94: operator(): block: [0,0,0], thread: [3,0,0] Assertion "
     "`input_val >= zero && input_val <= one` failed.\n", "loss-bce-input-range"),
    # L1Loss under python -W error
    (_TB + f'  File "{_F}", line 3263, in l1_loss\n    warnings.warn(\n'
     "UserWarning: Using a target size (torch.Size([4])) that is different to the input size "
     "(torch.Size([4, 1])). This will likely lead to incorrect results due to broadcasting. Please ensure they have "
     "the same size.\n", "loss-target-size-warning"),
    # target_lengths longer than the padded targets
    (_TB + "RuntimeError: Expected tensor to have size at least 6 at dimension 1, but got size 5 for argument #2 "
     "'targets' (while checking arguments for ctc_loss_allocate_outputs)\n", "ctc-lengths"),
    # torch.autograd.backward of the logits
    (_TB + "    torch.autograd.backward(outputs)\nRuntimeError: grad can be implicitly created only for scalar "
     "outputs\n", "backward-not-scalar"),
    (_TB + "RuntimeError: weight tensor should be defined either for all 3 classes or no classes but got weight "
     "tensor of shape: [2]\n", "loss-class-weight-size"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # an in-place add of floats into an int64 tensor, no BCE frame
    (_TB + "    counts += weights\nRuntimeError: result type Float can't be cast to the desired output type "
     "Long\n", "loss-bce-target-dtype"),
    # the MSELoss warning printed (not raised) by a run that then failed of something else
    (f"{_F}:3338: UserWarning: Using a target size (torch.Size([16])) that is different to the input size "
     "(torch.Size([16, 1])). This will likely lead to incorrect results due to broadcasting. Please ensure they "
     "have the same size.\n  return F.mse_loss(input, target, reduction=self.reduction)\n" + _TB
     + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n", "loss-target-size-warning"),
    # DeepSpeed's engine.backward of a per-token loss: its own words
    (_TB + "AssertionError: loss must be a scalar tensor. If you need to pass output gradients, backward() of "
     "output tensors\n", "backward-not-scalar"),
    # a label past the head's classes: the value, not the weights
    (_TB + "IndexError: Target 10 is out of bounds.\n", "loss-class-weight-size"),
])
def test_near_misses(text, name):
    assert sig(text) != name
