"""Round 219's rules (issue 45, live: linear algebra, FFT and complex numbers in a user's model code): linalg.inv /
solve on a singular matrix (linalg-singular), eigh's backward through repeated eigenvalues under anomaly mode
(linalg-eigh-backward-degenerate), bmm's second operand not transposed (bmm-batch2-shape), torch.fft's complex output
in a float layer or a loss kernel (complex-into-real-op), backward of a complex loss (backward-complex-loss) and
view_as_complex on a transposed view (view-as-complex-stride). The cases' own logs, second wordings and near misses
that must stay off them."""

from pathlib import Path

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("linalg-singular", "linalg-eigh-backward-degenerate", "bmm-batch2-shape", "complex-into-real-op",
       "backward-complex-loss", "view-as-complex-stride")
LIVE = Path(__file__).resolve().parents[1] / "data" / "live"


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("case, name", [
    ("live-linalg-inv-gram-no-ridge", "linalg-singular"),
    ("live-linalg-solve-laplacian-singular", "linalg-singular"),
    ("live-linalg-eigh-backward-repeated", "linalg-eigh-backward-degenerate"),
    ("live-linalg-bmm-scores-no-transpose", "bmm-batch2-shape"),
    ("live-linalg-fft-features-into-linear", "complex-into-real-op"),
    ("live-linalg-mse-on-complex-spectrum", "complex-into-real-op"),
    ("live-linalg-spectral-loss-complex-backward", "backward-complex-loss"),
    ("live-linalg-rope-view-as-complex-transposed", "view-as-complex-stride"),
    ("live-linalg-irfft-odd-length-no-n", "python-error"),
])
def test_case_logs(case, name):
    assert sig((LIVE / case / "log.txt").read_text(encoding="utf-8")) == name


_TB = 'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n    main()\n'


@pytest.mark.parametrize("last, name", [
    # second wordings of the same failures
    ("torch._C._LinAlgError: linalg.solve: The solver failed because the input matrix is singular.", "linalg-singular"),
    ("RuntimeError: Function 'LinalgSvdBackward0' returned nan values in its 0th output.",
     "linalg-eigh-backward-degenerate"),
    ("NotImplementedError: \"log_softmax_lastdim_kernel_impl\" not implemented for 'ComplexFloat'",
     "complex-into-real-op"),
    ("NotImplementedError: clamp is not supported for complex types", "complex-into-real-op"),
    ("RuntimeError: grad can be implicitly created only for real scalar outputs but got torch.complex128",
     "backward-complex-loss"),
])
def test_second_wordings(last, name):
    assert sig(_TB + last + "\n") == name


@pytest.mark.parametrize("last", [
    # near misses: another cause in similar words
    "RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.",
    "RuntimeError: mat1 and mat2 must have the same dtype, but got BFloat16 and Float",
    "NotImplementedError: \"mse_cpu\" not implemented for 'Half'",
    "RuntimeError: grad can be implicitly created only for scalar outputs",
    "torch._C._LinAlgError: linalg.cholesky: The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order 3 is not positive-definite).",
])
def test_near_misses(last):
    assert sig(_TB + last + "\n") not in NEW
