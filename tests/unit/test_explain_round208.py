"""Round 208's rules (issue 45, live: numerical failures, NaN, inf and the users' own guards against them): a
torch.distributions parameter refused as NaN (distribution-invalid-parameter), a Cholesky factor of a matrix that is not
positive-definite (linalg-not-positive-definite), an SVD of a matrix holding NaN (linalg-nonfinite-input), torch.histc of
NaN gradients (histc-non-finite), math.exp of a summed loss (math-range-overflow), sampling from logits divided by a
temperature of 0 (sampling-probs-not-finite) and a FloatingPointError guard beside DeepSpeed's skipped non-finite step
(ds-grads-nonfinite-guard). The cases' own logs, second wordings and near misses that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("distribution-invalid-parameter", "linalg-not-positive-definite", "linalg-nonfinite-input", "histc-non-finite",
       "math-range-overflow", "sampling-probs-not-finite", "ds-grads-nonfinite-guard")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-numerics-normal-std-batch-of-one", "distribution-invalid-parameter"),
    ("live-numerics-cholesky-no-jitter", "linalg-not-positive-definite"),
    ("live-numerics-svd-normalize-zero-row", "linalg-nonfinite-input"),
    ("live-numerics-histc-nan-grads", "histc-non-finite"),
    ("live-numerics-ppl-math-exp-summed-loss", "math-range-overflow"),
    ("live-numerics-sampling-temperature-zero", "sampling-probs-not-finite"),
    ("live-numerics-ds-gaussian-nll-exp-overflow", "ds-grads-nonfinite-guard"),
    ("live-numerics-skip-nonfinite-one-rank", "rank-left-early"),
    ("live-numerics-pairwise-dist-sqrt-zero", "nan-gradients"),
    ("live-numerics-anomaly-row-std-zero", "autograd-nan"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'
_DS_SKIP = ("[2026-12-07 10:00:00,000] [WARNING] [logging.py:123:log_dist] [Rank 0] [deepspeed] OVERFLOW! Skipping "
            "step. Gradients are non-finite, weights were not updated.\n")


@pytest.mark.parametrize("text, name", [
    # a Categorical's logits
    (_TB + "ValueError: Expected parameter logits (Tensor of shape (8, 4)) of distribution Categorical(logits: "
     "torch.Size([8, 4])) to satisfy the constraint IndependentConstraint(Real(), 1), but found invalid values:\n"
     "tensor([[nan, nan, nan, nan]])\n", "distribution-invalid-parameter"),
    # a MultivariateNormal's covariance, factorised by cholesky_ex
    (_TB + "torch._C._LinAlgError: linalg.cholesky_ex: The factorization could not be completed because the input is "
     "not positive-definite (the leading minor of order 3 is not positive-definite).\n",
     "linalg-not-positive-definite"),
    # an eigendecomposition
    (_TB + "torch._C._LinAlgError: linalg.eigh: The algorithm failed to converge because the input matrix contained "
     "non-finite values.\n", "linalg-nonfinite-input"),
    (_TB + "RuntimeError: torch.histc: range of [inf, inf] is not finite\n", "histc-non-finite"),
    (_TB + '  File "eval.py", line 12, in report\n    return math.pow(2, bits)\nOverflowError: math range error\n',
     "math-range-overflow"),
    # a sampler's own attribute, with the caret line of Python 3.11
    ('  File "sampler.py", line 30, in step\n'
     "    idx = torch.multinomial(torch.softmax(logits / self.temp, -1), 1)\n"
     "          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
     "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n", "sampling-probs-not-finite"),
    (_DS_SKIP + _TB + "FloatingPointError: loss is nan at step 12\n", "ds-grads-nonfinite-guard"),
])
def test_second_wordings(text, name):
    assert sig(text) == name


@pytest.mark.parametrize("text, name", [
    # an SVD of a finite but ill-conditioned matrix: another cause
    (_TB + "torch._C._LinAlgError: linalg.svd: The algorithm failed to converge because the input matrix is "
     "ill-conditioned or has too many repeated singular values (error code: 5).\n", "linalg-nonfinite-input"),
    # multinomial under transformers' generate (no temperature on the quoted line): fp16-overflow-sampling's
    ('  File "/opt/venv/lib/python3.11/site-packages/transformers/generation/utils.py", line 2791, in _sample\n'
     "    next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)\n"
     "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n", "sampling-probs-not-finite"),
    # numpy's seterr(all="raise") without DeepSpeed's skipped step
    (_TB + "FloatingPointError: overflow encountered in exp\n", "ds-grads-nonfinite-guard"),
    # fp16's dynamic loss scale search beside a guard: not the static scaler's non-finite report
    ("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768\n" + _TB +
     "FloatingPointError: loss is nan at step 3\n", "ds-grads-nonfinite-guard"),
    # Python's int/float conversion overflow, not math's range error
    (_TB + "OverflowError: cannot convert float infinity to integer\n", "math-range-overflow"),
])
def test_near_misses(text, name):
    assert sig(text) != name
