"""The fused residual add + RMSNorm kernel (train/norm_kernels.py) in Triton's CPU interpreter, against
PyTorch's expression in float64: the sum, the norm and the gradients of x, the residual and the weight,
for rows below, at and not at a power of two, in fp32 and bf16, the plain norm (no residual), a sum
nobody reads (the final norm's), and as one opaque op inside torch.compile. tests/gpu repeats it on a GPU.
The model's restructuring around it (each block leaves its last add to the next block's first norm) is
checked against the pre-norm formulation written out by hand."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from dscluster.train import perf
from dscluster.train.model import GPT, GPTConfig

CHECK = r"""
import json, torch
from dscluster.train import norm_kernels as nk
torch.manual_seed(0)
cases = []
def rel(a, b):
    return float((a.double() - b).abs().max() / b.abs().max())
# d 96 and 100 (partial blocks), 2048 (the 1.3B model's rows); more rows than the backward has programs
for dtype in (torch.float32, torch.bfloat16):
    for shape, residual, grad_sum in [((3, 5, 96), True, True), ((11, 2048), True, True), ((2, 7, 100), False, True),
                                      ((4, 3, 96), True, False)]:
        d = shape[-1]
        x = torch.randn(*shape).to(dtype).requires_grad_()
        r = torch.randn(*shape).to(dtype).requires_grad_() if residual else None
        w = (1 + 0.3 * torch.randn(d)).to(dtype).requires_grad_()
        g_sum = torch.randn(*shape).to(dtype) if grad_sum else None
        g_out = torch.randn(*shape).to(dtype)
        s, out = nk.add_rms_norm(x, r, w, 1e-5)
        if g_sum is None:
            out.backward(g_out)  # the sum unused: the final norm's case
        else:
            torch.autograd.backward([s, out], [g_sum, g_out])
        ref_in = [t.detach().double().requires_grad_() if t is not None else None for t in (x, r, w)]
        ref_s, ref_out = nk.add_rms_norm_reference(*ref_in, 1e-5)
        if g_sum is None:
            ref_out.backward(g_out.double())
        else:
            torch.autograd.backward([ref_s, ref_out], [g_sum.double(), g_out.double()])
        case = {"shape": shape, "dtype": str(dtype), "residual": residual, "grad_sum": grad_sum,
                "dtypes": [str(s.dtype), str(out.dtype)], "sum_is_x": s is x,
                "sum": rel(s, ref_s), "out": rel(out, ref_out), "grad_x": rel(x.grad, ref_in[0].grad),
                "grad_w": rel(w.grad, ref_in[2].grad)}
        if residual:
            case["grad_r"] = rel(r.grad, ref_in[1].grad)
        cases.append(case)
# a float32 residual stream plus a bf16 branch (autocast's mix): the sum promotes, as `x + residual` does
x, r, w = torch.randn(3, 96, requires_grad=True), torch.randn(3, 96).bfloat16().requires_grad_(), torch.ones(96)
s, out = nk.add_rms_norm(x, r, w, 1e-5)
torch.autograd.backward([s, out], [torch.ones_like(s), torch.ones_like(out)])
mixed = {"dtypes": [str(s.dtype), str(out.dtype), str(x.grad.dtype), str(r.grad.dtype)],
         "sum": rel(s, x.detach().double() + r.detach().double())}
compiled = torch.compile(lambda a, b, w: [t * 2 for t in nk.add_rms_norm(a, b, w, 1e-5)])
a, b, w = torch.randn(4, 96), torch.randn(4, 96), torch.randn(96)
compiled_err = max(float((p - 2 * q).abs().max()) for p, q in zip(compiled(a, b, w), nk.add_rms_norm_reference(a, b, w, 1e-5)))
print(json.dumps({"cases": cases, "mixed": mixed, "compiled_err": compiled_err}))
"""


def test_add_rms_norm_kernel_matches_float64_in_tritons_interpreter(in_triton_interpreter):
    report = in_triton_interpreter(["-c", CHECK])
    assert len(report["cases"]) == 8
    for c in report["cases"]:
        assert c["dtypes"] == [c["dtype"], c["dtype"]] and c["sum_is_x"] == (not c["residual"]), c
        # fp32: float rounding only; bf16: one rounding (2^-7: the interpreter truncates rather than rounds),
        # two for the norm of a sum (the sum's, which the norm reads as the reference does, and its own)
        tol = 1e-5 if c["dtype"] == "torch.float32" else 2**-7
        for key in ("sum", "out", "grad_x", "grad_r", "grad_w"):
            assert c.get(key, 0.0) <= tol * (2 if key == "out" and c["residual"] else 1), (key, c)
    assert report["mixed"]["dtypes"] == ["torch.float32", "torch.float32", "torch.float32", "torch.bfloat16"]
    assert report["mixed"]["sum"] < 1e-6
    assert report["compiled_err"] < 1e-5


def _by_hand(gpt: GPT, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The pre-norm GPT as it reads on paper: x += attn(norm1(x)); x += mlp(norm2(x)); final norm; tied head."""
    eps, shape = gpt.cfg.norm_eps, (gpt.cfg.d_model,)
    x = gpt.embed(idx)
    for b in gpt.blocks:
        x = x + b.attn(F.rms_norm(x, shape, b.norm1.weight, eps), gpt.rotary)
        x = x + b.mlp(F.rms_norm(x, shape, b.norm2.weight, eps))
    x = F.rms_norm(x, shape, gpt.norm.weight, eps)
    logits = F.linear(x, gpt.embed.weight)
    return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))  # as the model does


def test_blocks_handing_on_their_last_add_compute_the_plain_pre_norm_model():
    torch.manual_seed(0)
    cfg = GPTConfig(n_layer=3, n_head=2, d_model=32, vocab_size=61, seq_len=16, norm_eps=1e-3)
    gpt = GPT(cfg).double()
    with torch.no_grad():  # norm weights away from 1, so a norm that read the wrong weight shows
        for n, p in gpt.named_parameters():
            if "norm" in n:
                p.uniform_(0.5, 1.5)
    idx = torch.randint(0, cfg.vocab_size, (2, cfg.seq_len + 1))
    params = list(gpt.parameters())
    ours = gpt(idx[:, :-1], idx[:, 1:])
    ours_grads = torch.autograd.grad(ours, params)
    theirs = _by_hand(gpt, idx[:, :-1], idx[:, 1:])
    theirs_grads = torch.autograd.grad(theirs, params)
    torch.testing.assert_close(ours, theirs)
    for (name, _), a, b in zip(gpt.named_parameters(), ours_grads, theirs_grads):
        torch.testing.assert_close(a, b, msg=name)
    # the same parameters under the same names: checkpoints of the earlier layout load as they are
    keys = ["embed.weight", *[f"blocks.{i}.{k}.weight" for i in range(3) for k in
                              ("norm1", "attn.qkv", "attn.proj", "norm2", "mlp.gate_up", "mlp.down")], "norm.weight"]
    assert list(gpt.state_dict()) == keys


def test_norm_mode_swaps_the_fused_norm_into_every_norm_and_keeps_the_others():
    from dscluster.train import kernels, norm_kernels

    gpt = GPT(GPTConfig(n_layer=2, n_head=2, d_model=32, vocab_size=61, seq_len=16))
    norms = [gpt.norm, *(n for b in gpt.blocks for n in (b.norm1, b.norm2))]
    assert perf.swap_kernels(gpt, "triton") == "silu_mul+rotary_qkv"
    assert all(n.add_rms_norm is norm_kernels.add_rms_norm_reference for n in norms)
    assert perf.swap_kernels(gpt, "norm") == "silu_mul+rotary_qkv+add_rms_norm"
    assert all(n.add_rms_norm is norm_kernels.add_rms_norm for n in norms)
    assert all(b.attn.rotary_qkv is kernels.rotary_qkv and b.mlp.silu_mul is kernels.silu_mul for b in gpt.blocks)
    assert perf.use_kernels(gpt, "norm", "cpu") == "off (CPU)"
