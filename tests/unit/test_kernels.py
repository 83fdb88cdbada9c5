"""The hand-written SwiGLU kernel (train/kernels.py) runs here on CPU, in Triton's own interpreter, which
executes the kernel's program block by block as the GPU would: values and gradients against PyTorch's
expression, odd shapes included, and as one opaque op inside torch.compile. tests/gpu repeats the
comparison on a real GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CHECK = r"""
import json, torch
from dscluster.train import kernels
torch.manual_seed(0)
errors = []
for shape in [(3, 5, 600), (7, 2048), (2, 33, 2 * 1408)]:  # hidden 300, 1024, 1408: partial blocks too
    hidden = shape[-1] // 2
    gu = torch.randn(*shape, dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(*shape[:-1], hidden, dtype=torch.bfloat16)
    ref_gu = gu.detach().float().requires_grad_()
    ref = kernels.silu_mul_reference(ref_gu, hidden)
    ref.backward(grad.float())
    out = kernels.silu_mul(gu, hidden)
    out.backward(grad)
    errors.append({"shape": shape, "dtype": str(out.dtype), "out_shape": list(out.shape),
                   "out": float((out.float() - ref).abs().max() / ref.abs().max()),
                   "grad": float((gu.grad.float() - ref_gu.grad).abs().max() / ref_gu.grad.abs().max())})
compiled = torch.compile(lambda t: kernels.silu_mul(t, 300) * 2)
t = torch.randn(4, 600, dtype=torch.bfloat16)
doubled = float((compiled(t).float() - 2 * kernels.silu_mul_reference(t.float(), 300)).abs().max())
print(json.dumps({"errors": errors, "compiled_err": doubled}))
"""


def test_silu_mul_kernel_matches_pytorch_in_tritons_interpreter():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    res = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads(res.stdout.strip().splitlines()[-1])
    for e in report["errors"]:
        assert e["dtype"] == "torch.bfloat16" and e["out_shape"][-1] == e["shape"][-1] // 2, e
        # bf16 keeps 8 bits of mantissa: one rounding stays within 2^-8 of the largest value.
        assert e["out"] <= 2**-7 and e["grad"] <= 2**-7, e
    assert report["compiled_err"] < 0.05


def test_compiled_model_with_kernel_is_as_exact_as_the_plain_model_in_tritons_interpreter():
    """The whole model on CPU: plain bf16, compiled, and compiled with the kernel (run by the interpreter),
    each against float64 (tests/kernel_grads.py); a 3% error in the kernel's gate gradient fails this."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel_grads.py")
    res = subprocess.run([sys.executable, script, "cpu"], capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["bad"] == [], report["bad"]
    assert set(report["models"]) == {"plain", "compiled", "compiled+kernel"}
