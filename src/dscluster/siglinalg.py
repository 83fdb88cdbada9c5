"""Failure signatures of linear algebra, FFT and complex numbers in a user's model code, from round 219 of issue 45
(live: broken users' scripts run for real on torch 2.13 under DDP, gloo): torch.linalg.inv / solve on a singular
matrix, the backward of eigh / svd through repeated eigenvalues, a batched matmul's second operand not transposed, a
complex tensor (torch.fft's output) where a real one is wanted (a float layer, a loss kernel, backward) and
view_as_complex on a view whose last dimension is not contiguous. linalg.cholesky's not positive-definite is
signumerics.py's linalg-not-positive-definite. Each pattern is the wording of the component that prints it (ATen's
linalg checks, torch/autograd's _make_grads, the dispatch macros), never one log's. sigrounds.py places this table with
the other round tables, before sigparallel.py's autograd-nan and siglibs.py's dtype-mismatch, which read the same
lines more generally."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

LINALG_SIGNATURES: tuple[Signature, ...] = (
    # ATen's linalg checks (aten/src/ATen/native/BatchLinearAlgebra.cpp, _linalg_check_errors): "linalg.inv: The
    # diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular.",
    # "torch.linalg.solve: The solver failed because the input matrix is singular." (also lu_factor, inv_ex's raise).
    _sig("linalg-singular", r"(?:linalg\.\w+|torch\.linalg\.\w+|\blu\w*): (?:The diagonal element \d+ is zero, the "
         r"inversion could not be completed|The solver failed|The factorization could not be completed)? ?[^\n]{0,80}"
         r"because the input matrix is singular",
         "torch.linalg.inv / solve (or an LU factorization) was given a singular matrix: one that has no inverse, "
         "most often built from the batch itself: a Gram or covariance matrix X^T X of fewer samples than features, "
         "a one-hot count matrix Y^T Y where a class is absent from the batch (a zero row and column), a graph "
         "Laplacian D - A (always singular: its rows sum to 0; an isolated node gives a zero row), or duplicate / "
         "all-zero rows. It depends on the batch, so it may pass for a while and fail on another one.",
         "Regularize the matrix before solving: A + eps * torch.eye(n) (a ridge term, eps about 1e-4 to 1e-2 of its "
         "scale), or use torch.linalg.pinv / torch.linalg.lstsq (a least-squares answer for a singular system), or "
         "compute what was meant without an inverse (class means as sums divided by counts.clamp(min=1)); prefer "
         "linalg.solve(A, B) to inv(A) @ B. A restart meets the same batch.", retry=False),
    # Anomaly mode's check on linalg's eigen and singular value backwards (torch/csrc/autograd/python_anomaly_mode.cpp
    # on "LinalgEighBackward0", "LinalgSvdBackward0", "LinalgEigBackward0"): their eigenvector gradient divides by the
    # differences of the eigenvalues, inf or NaN where two are equal.
    _sig("linalg-eigh-backward-degenerate",
         r"Function '(?:LinalgEigh|LinalgEig|LinalgSvd|Svd|SymeigBackward|Eigh)\w*Backward\d*' returned nan values",
         "The backward of torch.linalg.eigh / eig / svd returned NaN (autograd's anomaly detection stopped it): their "
         "gradient through the eigenvectors (singular vectors) divides by the differences of the eigenvalues, which "
         "is inf or NaN where two eigenvalues are equal or nearly so: a matrix with repeated eigenvalues (an identity "
         "or orthogonal weight's W W^T, a low-rank covariance with many zero eigenvalues, a symmetric matrix of a "
         "few distinct values), or a NaN already in the matrix.",
         "Do not backpropagate through eigenvectors of a matrix whose eigenvalues may repeat: use only the "
         "eigenvalues (torch.linalg.eigvalsh / svdvals, whose gradient is defined for repeated values), or add a "
         "small distinct perturbation (A + eps * torch.diag(torch.arange(n))) or a jitter, or compute the term under "
         "torch.no_grad() if it is only monitored. A restart meets the same matrix.", retry=False),
    # ATen's bmm / baddbmm shape check (aten/src/ATen/native/LinearAlgebra.cpp): "Expected size for first two
    # dimensions of batch2 tensor to be: [4, 8] but got: [4, 16]." (torch.bmm, and torch.matmul of two 3-d tensors).
    _sig("bmm-batch2-shape", r"Expected size for first two dimensions of batch2 tensor to be: \[\d+, \d+\] but got: "
         r"\[\d+, \d+\]",
         "A batched matrix product (torch.bmm, or @ / torch.matmul of two 3-d tensors) got operands whose inner "
         "dimensions do not agree: the second operand's first two dimensions must be (batch, the first operand's "
         "last dimension). Most often the second operand was not transposed, as in attention scores torch.bmm(q, k) "
         "with k of shape (batch, seq, dim) instead of k.transpose(1, 2), or the batch dimensions differ.",
         "Give bmm (B, n, m) and (B, m, p): transpose the second operand where it is stored the other way (q @ "
         "k.transpose(-2, -1) for attention scores), and print both shapes at that line. A restart fails the same "
         "way.", retry=False),
    # A complex tensor where torch wants a real one: F.linear's dtype check ("mat1 and mat2 must have the same dtype,
    # but got ComplexFloat and Float"), the dispatch macros of kernels with no complex case ("\"mse_cpu\" not
    # implemented for 'ComplexFloat'"), clamp / relu ("clamp is not supported for complex types").
    _sig("complex-into-real-op", r"must have the same dtype, but got Complex\w+ and (?:Float|Double|BFloat16|Half)\b|"
         r"must have the same dtype, but got (?:Float|Double|BFloat16|Half) and Complex\w+|\"\w+\" not implemented "
         r"for 'Complex(?:Float|Double|Half)'|clamp is not supported for complex types",
         "A complex tensor reached an operation that takes real ones: the output of torch.fft.fft / rfft / stft "
         "(complex) fed to a float layer (nn.Linear, a convolution), a loss kernel (mse_loss, cross_entropy) or an "
         "activation (relu, clamp), or a complex parameter in a model of float layers. The spectrum was meant to be "
         "turned into real numbers first.",
         "Make the complex values real before that operation: their magnitude (spec.abs(), or spec.abs() ** 2 for "
         "power, torch.log1p(spec.abs()) for features), or both parts as features with torch.view_as_real(spec)"
         ".flatten(-2) (twice the width), or .real / .imag; for a spectral loss compare torch.view_as_real of both "
         "spectra or their magnitudes. A restart fails the same way.", retry=False),
    # torch/autograd/__init__.py _make_grads: "grad can be implicitly created only for real scalar outputs but got
    # torch.complex64".
    _sig("backward-complex-loss", r"grad can be implicitly created only for real scalar outputs but got "
         r"torch\.complex\d+",
         "backward() was called on a complex loss: some term of it is complex (built from torch.fft's output, a "
         "complex parameter or view_as_complex), most often a spectral loss written as ((fft(a) - fft(b)) ** 2)"
         ".mean(): squaring a complex difference gives a complex number, not its squared magnitude.",
         "Make every term of the loss real: the squared magnitude (fft(a) - fft(b)).abs() ** 2 (or "
         "torch.view_as_real of the difference, squared), .abs().mean() for an L1 spectral loss; print loss.dtype "
         "before backward. A restart fails the same way.", retry=False),
    # aten view_as_complex's check (aten/src/ATen/native/ComplexHelper.h): "Tensor must have a last dimension with
    # stride 1" (and "Tensor must have a last dimension of size 2").
    _sig("view-as-complex-stride", r"Tensor must have a last dimension with stride 1\b",
         "torch.view_as_complex was given a view whose last dimension (the real / imaginary pairs) is not contiguous: "
         "a transposed, permuted or sliced view, such as rotary embeddings' (..., 2, dim/2) halves transposed to "
         "(..., dim/2, 2). view_as_complex reinterprets memory, so each pair must be adjacent (stride 1).",
         "Make the pairs contiguous first: torch.view_as_complex(x.transpose(-1, -2).contiguous()) (or "
         "x.float().reshape(*x.shape[:-1], -1, 2) of a contiguous tensor), or build the complex numbers with "
         "torch.complex(real, imag), which takes any layout. A restart fails the same way.", retry=False),
)
