"""Failure signatures of numbers that stopped being finite, from round 208 of issue 45 (live: broken users' scripts run
for real on torch 2.13 and DeepSpeed 0.19.8 under DDP or ZeRO, CPU and gloo): the place a NaN or inf shows is seldom
where it was made, so each of these names the component that refused the value and, from it, where the non-finite
number most often comes from. torch.distributions' argument validation (distribution.py: `Expected parameter scale
(...) of distribution Normal(...) to satisfy the constraint ..., but found invalid values`), torch.linalg's LAPACK
checks (a Cholesky factor of a matrix that is not positive-definite; an SVD of a matrix holding NaN or inf),
torch.histc's range taken from non-finite values, Python's math module overflowing a float (`math range error`),
torch.multinomial refusing probabilities sampled from logits divided by a temperature (sigmessages.py's
fp16-overflow-sampling keeps every other multinomial), and a FloatingPointError raised beside DeepSpeed's own report
that it skipped a step for non-finite gradients. Each pattern is the wording of the component that prints it, never
one log's. sigrounds.py places this table with the other round tables, before the exception messages'
(sigmessages.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dscluster.sigtypes import CARET_LINE, Signature, then
from dscluster.sigtypes import sig as _sig

# deepspeed/runtime/fp16/loss_scaler.py, LossScalerBase.update_scale (a static scale: fp32, bf16, fp16 with a fixed
# loss_scale): a step skipped because the gradients hold inf or NaN. The dynamic scaler's "OVERFLOW! Rank N Skipping
# step. Attempted loss scale: ..." is fp16's normal search for a scale, no sign of a broken model by itself.
_DS_SKIPPED = "OVERFLOW! Skipping step. Gradients are non-finite, weights were not updated"


# The source line's division of the logits by a temperature (logits / temperature, / args.temperature, / self.temp,
# / CONFIG["temperature"]), read on the quoted line only.
_TEMPERATURE_DIVIDES = re.compile(r"/\s*[\w.\[\]\"']{0,60}?temp", re.IGNORECASE)


def _no_ds_skip(texts: Iterable[str]) -> bool:
    return not any(_DS_SKIPPED in t for t in texts)


NONFINITE_SIGNATURES: tuple[Signature, ...] = (
    # torch/distributions/distribution.py, Distribution.__init__ with validate_args (the default): each parameter
    # checked against its constraint ("Expected parameter scale (Tensor of shape (1, 2)) of distribution Normal(loc:
    # torch.Size([1, 2]), scale: torch.Size([1, 2])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found
    # invalid values:\ntensor([[nan, nan]])"); the same words for probs, logits, concentration, covariance_matrix.
    _sig("distribution-invalid-parameter", r"Expected parameter \w+ \([^\n]{0,200}?\) of distribution \w+\([^\n]{0,400}?"
         r"\) to satisfy the constraint [^\n]{0,200}?, but found invalid values",
         "A torch.distributions distribution was given parameter values outside what it allows, which its argument "
         "validation refuses: most often NaN (printed below the message) from earlier in the step - a standard "
         "deviation over one sample (torch.std's Bessel correction divides by n - 1 = 0; its warning `std(): degrees "
         "of freedom is <= 0` says so, typical when a batch is split over ranks down to one sample each), a policy or "
         "model that diverged, a log or division by 0 - or a scale that is negative or 0 (a raw Linear output, not "
         "made positive), probabilities outside [0, 1] or not summing to 1 (a raw output given as probs=, the sigmoid "
         "or softmax left out), NaN logits from 0 * -inf (a mask multiplied by float('-inf') rather than applied with "
         "masked_fill).",
         "Read the invalid values it prints: NaN means find where they arise (torch.isfinite checks, "
         "torch.autograd.detect_anomaly); make a scale positive with softplus(x) + eps or exp(log_std) clamped; take "
         "batch statistics over enough samples (over all ranks with all_reduce, or a learned or fixed std) and never "
         "torch.std of one element; give raw outputs as logits= (Bernoulli(logits=x), not probs=x without a sigmoid) "
         "rather than normalising probabilities by hand; mask logits with logits.masked_fill(~valid, float('-inf')), "
         "never by multiplying with -inf (0 * -inf is NaN). A restart fails the same way.", retry=False),
    # torch/linalg (BatchLinearAlgebra.cpp's LAPACK info check): "linalg.cholesky: The factorization could not be
    # completed because the input is not positive-definite (the leading minor of order N is not positive-definite)";
    # MultivariateNormal(covariance_matrix=...) and torch.cholesky (deprecated) fail through the same check.
    _sig("linalg-not-positive-definite", r"(?:linalg\.)?cholesky(?:_ex)?: The factorization could not be completed "
         r"because the input is not positive-definite",
         "A Cholesky factorization (torch.linalg.cholesky, or a MultivariateNormal built from a covariance matrix) was "
         "given a matrix that is not positive-definite: a covariance or kernel matrix estimated from fewer samples "
         "than dimensions (its rank is at most the number of samples - 1), features that are constant or duplicated, "
         "float32 rounding of a nearly singular matrix, no jitter added to the diagonal, or NaN in it.",
         "Add jitter to the diagonal (cov + eps * I, eps about 1e-5 to 1e-3 times its mean diagonal), compute it in "
         "float64, estimate it from more samples than dimensions (all ranks' features, or shrinkage towards the "
         "diagonal); torch.linalg.cholesky_ex returns an info code instead of raising, and the order it names is "
         "the first failing minor. A restart fails the same way.", retry=False),
    # torch/linalg (BatchLinearAlgebra.cpp): "linalg.svd: The algorithm failed to converge because the input matrix
    # contained non-finite values." (svd, svdvals, matrix_rank, pinv, lstsq, eigh and eig word it the same). The
    # ill-conditioned "... because the input matrix is ill-conditioned or has too many repeated singular values" is
    # another cause, not read here.
    _sig("linalg-nonfinite-input", r"linalg\.\w+: The algorithm failed to converge because the input matrix "
         r"contained non-finite values",
         "A torch.linalg decomposition (an SVD, svdvals, an eigendecomposition, a pseudo-inverse or rank) was given a "
         "matrix holding NaN or inf: the values went non-finite before it - a normalisation by a norm or std of 0 "
         "without eps (all-zero padded rows or embeddings, z / z.norm()), a log of 0, an exp overflow, or a model "
         "that diverged; the decomposition is only where it shows.",
         "Find where the NaN first appears (torch.isfinite on the inputs and activations, "
         "torch.autograd.detect_anomaly for the gradients): normalise with F.normalize (which clamps the norm by eps) "
         "or add eps to every norm and std, mask padded rows out before the decomposition. A restart fails the same "
         "way.", retry=False),
    # ATen's histc (SummaryOps.cpp / HistogramKernel.cpp): with min = max = 0 (the default) the range is the data's own
    # min and max, refused when either is not finite: "torch.histc: range of [-nan, -nan] is not finite".
    _sig("histc-non-finite", r"torch\.histc: range of \[[^\]\n]{1,60}\] is not finite",
         "torch.histc took its range from a tensor holding NaN or inf (with min and max left at 0 it uses the data's "
         "own minimum and maximum): the values being histogrammed - gradients, weights or activations logged for "
         "monitoring - are not finite, because the loss or the forward produced inf or NaN (an exp overflow on "
         "unnormalised inputs, a log of 0, a division by 0, a learning rate that diverged).",
         "Look for the first non-finite value before the histogram (torch.isfinite on the loss, "
         "torch.autograd.detect_anomaly for the gradients) and fix it there: normalise the inputs, compute in log "
         "space (F.poisson_nll_loss(log_input=True), log_softmax), clamp before exp; give histc an explicit finite "
         "min/max or skip non-finite tensors when logging. A restart fails the same way.", retry=False),
    # CPython's math module (mathmodule.c, errno ERANGE): "OverflowError: math range error" from math.exp, math.pow,
    # math.cosh, math.ldexp... whose result exceeds a double (math.exp of anything above about 709.78).
    _sig("math-range-overflow", r"OverflowError: math range error",
         "A Python math function's result overflowed a float (about 1.8e308): most often math.exp of a loss to report "
         "perplexity where the loss is a sum (over batches, tokens or ranks, after an all_reduce with SUM) instead of "
         "a mean, or the loss of a run that diverged; math.exp overflows for anything above about 709.",
         "Average the loss before exp (divide the summed loss by the number of batches or tokens, and by the world "
         "size after an all_reduce with SUM); guard the report as transformers' examples do (try: math.exp(loss) "
         "except OverflowError: float('inf')), or use torch.exp, which gives inf. A restart fails the same way.",
         retry=False),
    # ATen's multinomial check ("probability tensor contains either `inf`, `nan` or element < 0") where the source line
    # Python quotes above it samples from logits divided by a temperature (torch.multinomial(torch.softmax(logits /
    # temperature, -1), 1), args.temperature, self.temp...): a temperature of 0 gives inf logits and a NaN softmax. Any
    # other multinomial (generate's, a line that shows no temperature) stays fp16-overflow-sampling (sigmessages.py).
    _sig("sampling-probs-not-finite",
         then(r"\btorch\.multinomial\(", r"\n" + CARET_LINE + r"(?P<ev>[^\n]*?probability tensor contains either "
              r"`?inf`?, `?nan`? or element < 0[^\n]*)", gap=r"[^\n]"),
         "A sampling step divides the logits by a temperature (the source line above the error) and torch.multinomial "
         "got probabilities that are inf, NaN or negative: a temperature of 0 (meant as greedy decoding) makes "
         "logits / 0 infinite and their softmax NaN; otherwise the logits themselves were not finite (a model that "
         "diverged, float16 overflow) or a top-k/top-p filter masked every token to -inf.",
         "For greedy decoding take logits.argmax(-1) instead of sampling (branch on temperature == 0, or clamp the "
         "temperature to a small minimum such as 1e-5), and check the configured value; keep at least one token in "
         "any top-k/top-p mask; check the logits with torch.isfinite before sampling and look for the divergence if "
         "they are NaN. A restart fails the same way.", retry=False,
         aside_if=lambda m, _texts: not _TEMPERATURE_DIVIDES.search(m.group(0).split("\n", 1)[0])),
    # A FloatingPointError (Python's exception for a floating-point failure, what a script's own guard on a non-finite
    # loss or gradient norm raises) beside DeepSpeed's own report that it skipped a step because the gradients were
    # non-finite (_DS_SKIPPED above): DeepSpeed's gradient_clipping cannot clip an inf or NaN norm, so each such step
    # is dropped until the script's guard ends the run. Set aside without DeepSpeed's report (numpy's seterr, a
    # script's own guard on something else).
    _sig("ds-grads-nonfinite-guard", r"^[^\n]*?\bFloatingPointError: [^\n]*",
         "The gradients were not finite (inf or NaN): DeepSpeed found it, skipped the optimizer step (`[deepspeed] "
         "OVERFLOW! Skipping step. Gradients are non-finite, weights were not updated`: with fp32, bf16 or a static "
         "loss scale this is no fp16 scale search but a broken loss), and the script's own guard on a non-finite loss "
         "or gradient norm then raised FloatingPointError. The forward or the loss produces inf or NaN: an exp that "
         "overflows (a hand-written NLL with exp(-log_var), unnormalised inputs in the thousands), a log or sqrt of 0, "
         "a division by 0, a learning rate that diverged. gradient_clipping cannot clip an infinite norm.",
         "Find the first non-finite value (torch.isfinite on the loss and outputs, torch.autograd.detect_anomaly for "
         "the gradients) and fix it there: normalise the inputs, use the library's stable losses "
         "(F.gaussian_nll_loss, which clamps the variance, log_softmax, BCEWithLogitsLoss) or clamp before exp, add "
         "eps to log, sqrt and divisions, lower the learning rate. A restart fails the same way.", retry=False,
         aside_if=lambda m, texts: _no_ds_skip(texts)),
)
