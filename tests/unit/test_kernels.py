"""The hand-written SwiGLU and rotary kernels (train/kernels.py) run here on CPU, in Triton's own interpreter, which
executes the kernel's program block by block as the GPU would: values and gradients against PyTorch's
expression, odd shapes included, and as one opaque op inside torch.compile. tests/gpu repeats the
comparison on a real GPU."""

from __future__ import annotations

import os

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


def test_silu_mul_kernel_matches_pytorch_in_tritons_interpreter(in_triton_interpreter):
    report = in_triton_interpreter(["-c", CHECK])
    for e in report["errors"]:
        assert e["dtype"] == "torch.bfloat16" and e["out_shape"][-1] == e["shape"][-1] // 2, e
        # bf16 keeps 8 bits of mantissa: one rounding stays within 2^-8 of the largest value.
        assert e["out"] <= 2**-7 and e["grad"] <= 2**-7, e
    assert report["compiled_err"] < 0.05


def test_compiled_model_with_kernel_is_as_exact_as_the_plain_model_in_tritons_interpreter(in_triton_interpreter):
    """The whole model on CPU: plain bf16, compiled, and compiled with the kernel (run by the interpreter),
    each against float64 (tests/kernel_grads.py); a 3% error in the kernel's gate gradient fails this."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kernel_grads.py")
    report = in_triton_interpreter([script, "cpu"])
    assert report["bad"] == [], report["bad"]
    assert set(report["models"]) == {"plain", "compiled", "compiled+kernel", "compiled+norm"}


ROTARY_CHECK = r"""
import json, torch
from dscluster.train import kernels
torch.manual_seed(0)
errors = []
# hd 16 and 128; H*hd/2 below, at and above the kernel's block of pairs (partial blocks, two programs)
for B, T, H, hd in [(2, 5, 4, 16), (1, 7, 3, 128), (2, 3, 16, 128), (1, 2, 9, 128)]:
    qkv = torch.randn(B, T, 3, H, hd).to(torch.bfloat16)
    theta = torch.randn(T, hd // 2, dtype=torch.float64)
    grads = [torch.randn(B, T, H, hd).to(torch.bfloat16) for _ in range(3)]
    ref_in = qkv.double().requires_grad_()  # float64 from the same bf16 inputs: only the output rounds
    ref = kernels.rotary_qkv_reference(ref_in, theta.cos(), theta.sin())
    torch.autograd.backward(ref, [g.double() for g in grads])
    x = qkv.clone().requires_grad_()
    out = kernels.rotary_qkv(x, theta.cos().float(), theta.sin().float())
    # gradients laid out (B, H, T, hd), as SDPA's backward may hand them back through the transposes
    torch.autograd.backward(out, [g.transpose(1, 2).contiguous().transpose(1, 2) for g in grads])
    errors.append({"shape": [B, T, H, hd], "dtype": str(out[0].dtype), "contiguous": all(o.is_contiguous() for o in out),
                   "out": max(float((o.double() - r).abs().max() / r.abs().max()) for o, r in zip(out, ref)),
                   "grad": float((x.grad.double() - ref_in.grad).abs().max() / ref_in.grad.abs().max()),
                   "v_exact": bool(torch.equal(out[2], qkv[:, :, 2]))})
t, theta = torch.randn(1, 4, 3, 2, 8), torch.randn(4, 4)
compiled = torch.compile(lambda t, c, s: [o * 2 for o in kernels.rotary_qkv(t, c, s)])
err = max(float((a - 2 * b).abs().max()) for a, b in zip(compiled(t, theta.cos(), theta.sin()),
                                                          kernels.rotary_qkv_reference(t, theta.cos(), theta.sin())))
print(json.dumps({"errors": errors, "compiled_err": err}))
"""


def test_rotary_kernel_matches_float64_in_tritons_interpreter(in_triton_interpreter):
    report = in_triton_interpreter(["-c", ROTARY_CHECK])
    assert len(report["errors"]) == 4
    for e in report["errors"]:
        assert e["dtype"] == "torch.bfloat16" and e["contiguous"] and e["v_exact"], e
        # one rounding to bf16 (2^-7 as above: the interpreter may truncate rather than round)
        assert e["out"] <= 2**-7 and e["grad"] <= 2**-7, e
    assert report["compiled_err"] < 1e-5
