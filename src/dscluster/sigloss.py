"""Failure signatures of loss functions' contracts broken in the user's own training code, from round 202 of issue 45
(live: broken users' scripts run for real on torch 2.13 under DDP): (batch, seq, vocab) logits given to cross_entropy
unflattened, one-hot integer labels read as class probabilities, binary cross-entropy given targets of another shape
or an integer dtype, BCELoss given logits, a loss's broadcasting warning raised as an error, CTC lengths longer than
the tensors, a non-scalar loss handed to backward, and class weights of the wrong length. Each pattern is the wording
of the component that prints it (ATen's LossNLL.cpp, Loss.cpp and LossCTC.cpp, torch/nn/functional.py, torch/autograd's
_make_grads) and, where the words are not the loss's own, the loss's frame. sigrounds.py places this table just before
the exception messages' (sigmessages.py), and LOSS_AFTER_MESSAGES just after them."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

LOSS_SIGNATURES: tuple[Signature, ...] = (
    # LossNLL.cpp's nll_loss_nd check, reached by cross_entropy / nll_loss with an input of 3+ dimensions: "Expected
    # target size [4, 50], got [4, 8]" (the expected size is the input's with dimension 1, the classes, removed).
    _sig("loss-ce-target-size", r"\bExpected target size \[[\d, ]+\], got \[[\d, ]+\]",
         "cross_entropy (or nll_loss) got an input of more than two dimensions, which it reads as (N, C, d1, ...) "
         "with the classes in dimension 1, and a target whose shape is not the input's without that dimension. "
         "Most often a language model's (batch, seq, vocab) logits were given with the (batch, seq) labels without "
         "flattening them, so the sequence length is taken for the class count; or the labels of a segmentation or "
         "token task do not match the logits' spatial or sequence size.",
         "Flatten both: F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1)), or put the classes in "
         "dimension 1 (logits.transpose(1, 2) / permute for (N, C, d1, ...)); check that the labels have the "
         "logits' shape without the class dimension. A restart fails the same way.", retry=False),
    # LossNLL.cpp's cross_entropy with a target of the input's shape (class probabilities): "Expected floating point
    # type for target with class probabilities, got Long".
    _sig("loss-ce-onehot-target", r"\bExpected floating point type for target with class probabilities, got \w+",
         "cross_entropy was given a target of the same shape as its input, which it reads as class probabilities, "
         "but of an integer (or bool) dtype: most often one-hot labels (F.one_hot, a label matrix, a Keras-style "
         "categorical target) where cross_entropy takes class indices, or multi-label 0/1 targets that belong to "
         "BCEWithLogitsLoss.",
         "Give class indices, a (N,) int64 tensor (labels.argmax(dim=1) of the one-hot matrix, or the labels before "
         "one_hot); or, for soft targets, a float tensor of probabilities (one_hot(...).float()); for multi-label "
         "targets use BCEWithLogitsLoss with float targets. A restart fails the same way.", retry=False),
    # torch/nn/functional.py's binary_cross_entropy_with_logits and binary_cross_entropy: "Target size
    # (torch.Size([16])) must be the same as input size (torch.Size([16, 1]))"; older binary_cross_entropy: "Using a
    # target size ... that is different to the input size ... is deprecated. Please ensure they have the same size."
    _sig("loss-bce-target-size", r"\bTarget size \(torch\.Size\(\[[\d, ]*\]\)\) must be the same as input size "
         r"\(torch\.Size\(\[[\d, ]*\]\)\)|\bUsing a target size \([^\n]{0,80}\) that is different to the input size "
         r"\([^\n]{0,80}\) is deprecated\. Please ensure they have the same size",
         "BCEWithLogitsLoss (or BCELoss) needs the target to have exactly the input's shape and got another: most "
         "often a one-output head's (N, 1) logits against (N,) labels, or the reverse; or a multi-label head with "
         "another number of outputs than the label vector has.",
         "Make the shapes equal: logits.squeeze(-1) against (N,) labels, or labels.unsqueeze(1).float() against "
         "(N, 1) logits; for multi-label, one output per label. A restart fails the same way.", retry=False),
    # Integer targets to binary_cross_entropy_with_logits: ATen's type promotion when it writes the loss into the
    # target's dtype: "result type Float can't be cast to the desired output type Long", read only under that frame
    # (the same words come from any in-place op on an integer tensor).
    _sig("loss-bce-target-dtype", r"in binary_cross_entropy_with_logits\n(?:[^\n]*\n){0,6}?"
         r"(?P<ev>[^\n]{0,80}?result type \w+ can't be cast to the desired output type "
         r"(?:Long|Int|Short|Byte|Char|Bool)\b[^\n]*)",
         "BCEWithLogitsLoss (binary_cross_entropy_with_logits) was given integer (or bool) targets: its targets must "
         "be floating point like the logits, and 0/1 labels built as int64 (torch.zeros(..., dtype=torch.long), "
         "labels read from a file as integers, a DataLoader's default collate of Python ints) are not converted.",
         "Convert the targets: loss_fn(logits, targets.float()) (or build the label tensor as float32 in the "
         "dataset). A restart fails the same way.", retry=False),
    # ATen's Loss.cpp binary_cross_entropy check (CPU): "all elements of input should be between 0 and 1"; on CUDA
    # the kernel's "Assertion `input_val >= zero && input_val <= one` failed."
    _sig("loss-bce-input-range", r"\ball elements of input should be between 0 and 1\b|"
         r"Assertion [`']input_val >= zero && input_val <= one[`'] failed",
         "nn.BCELoss (binary_cross_entropy) takes probabilities in [0, 1] and got values outside it: the model returns "
         "raw logits (its head ends in a Linear with no sigmoid), or a sigmoid output was rescaled or mixed up; "
         "NaN inputs (a diverged model) fail the same check.",
         "Use nn.BCEWithLogitsLoss on the raw logits (numerically stable, no sigmoid in the model), or apply "
         "torch.sigmoid before BCELoss; if the inputs are NaN, look for the divergence first. A restart fails the "
         "same way.", retry=False),
    # torch/nn/functional.py's mse_loss / l1_loss / smooth_l1_loss / huber_loss warning raised as an exception (the
    # script's warnings.simplefilter("error") or python -W error): the UserWarning line is the exception's, after the
    # frame that calls warnings.warn, not a printed warning ("functional.py:4284: UserWarning: ...").
    _sig("loss-target-size-warning", r"in (?:mse_loss|l1_loss|smooth_l1_loss|huber_loss)\n[^\n]*warnings\.warn\(\n"
         r"(?:[^\n]*\^[^\n]*\n)?(?P<ev>[^\n]{0,40}?\bUserWarning: Using a target size \([^\n]{0,80}\) that is "
         r"different to the input size[^\n]*)",
         "A regression loss (MSELoss, L1Loss, SmoothL1Loss, HuberLoss) got a target whose shape differs from the "
         "input's, e.g. (N, 1) predictions against (N,) targets, which would broadcast to (N, N) and give a wrong "
         "loss; torch warns, and the script runs with warnings turned into errors (warnings.simplefilter('error'), "
         "python -W error, pytest's filterwarnings), so the warning stopped it.",
         "Make the shapes equal: predictions.squeeze(-1) against (N,) targets, or targets.unsqueeze(1) against (N, 1) "
         "predictions (the loss would otherwise be wrong even without the error). A restart fails the same way.",
         retry=False),
    # LossCTC.cpp's ctc_loss_allocate_outputs checks: "Expected input_lengths to have value at most 30, but got value
    # 60", "Expected tensor to have size at least 6 at dimension 1, but got size 5 for argument #2 'targets' (while
    # checking arguments for ctc_loss...)", and the lengths' count check "input_lengths must be of size batch_size".
    _sig("ctc-lengths", r"\bExpected input_lengths to have value at most \d+, but got value \d+|"
         r"\bExpected tensor to have size at least \d+ at dimension 1, but got size \d+ for argument #2 'targets' "
         r"\(while checking arguments for ctc_loss|\b(?:input|target)_lengths must be of size batch_size",
         "CTCLoss's length arguments do not fit its tensors: an input length is longer than the log-probs' time "
         "dimension (lengths counted in audio frames or samples before the model's subsampling: strided "
         "convolutions, pooling), a target length is longer than the padded targets, or there are not batch-size "
         "lengths.",
         "Compute input_lengths from what the model outputs: divide the frame counts the way its strides do (e.g. "
         "(lengths + 1) // 2 per stride-2 layer) and clamp them to log_probs.size(0); target_lengths from the "
         "unpadded targets; one length per sample. A restart fails the same way.", retry=False),
    # LossNLL.cpp's weight check: "weight tensor should be defined either for all 10 classes or no classes but got
    # weight tensor of shape: [8]" (nll_loss, cross_entropy, nll_loss2d).
    _sig("loss-class-weight-size", r"\bweight tensor should be defined either for all \d+ classes or no classes but "
         r"got weight tensor of shape",
         "The class weights given to cross_entropy / nll_loss (weight=) have another length than the model's number "
         "of classes: most often computed from the labels present (torch.bincount or np.bincount without "
         "minlength, np.unique, a Counter), so classes absent from the split, the largest ones among them, are left "
         "out; or computed for another label set than the head's.",
         "Give one weight per class of the head: torch.bincount(labels, minlength=num_classes) (with a floor for "
         "classes of count 0, e.g. counts.clamp(min=1)), or sklearn's compute_class_weight over classes=np.arange("
         "num_classes). A restart fails the same way.", retry=False),
)

# The words of torch's autograd, which DeepSpeed's pipeline reaches too: read after the exception messages' table.
LOSS_AFTER_MESSAGES: tuple[Signature, ...] = (
    # torch/autograd/__init__.py's _make_grads, reached by tensor.backward() or torch.autograd.backward without a
    # gradient: "grad can be implicitly created only for scalar outputs". (DeepSpeed's engine.backward says its own
    # words, ds-backward-not-loss; a PipelineModule without loss_fn is pipe-no-loss-fn, whose
    # frame-bound pattern in the exception messages' table (sigdssource.py) must be read first: so signatures.py places
    # this one just after that table.)
    _sig("backward-not-scalar", r"\bgrad can be implicitly created only for scalar outputs\b",
         "backward() was called on a tensor of more than one element: a loss computed with reduction='none' (per "
         "sample or per token, e.g. multiplied by sample weights or a mask) and never reduced, a model output or "
         "logits instead of the loss, or a loss of a model that returns one value per sample or per GPU "
         "(DataParallel's gathered losses).",
         "Reduce the loss to one number before backward: loss.mean() or (loss * weights).sum() / weights.sum() (for "
         "masked tokens, divide by the mask's sum); backward on the scalar loss, not the outputs. A restart fails "
         "the same way.", retry=False),
)
