"""How far the compiled model with the hand-written kernels ("compiled+kernel": SwiGLU and rotary;
"compiled+norm": those and the fused residual add + RMSNorm) is from exact arithmetic, next to how far
the plain bf16 model is: the check behind tests/unit/test_kernels.py (Triton's CPU interpreter) and
tests/gpu/test_gpu_kernels.py (a real GPU).

Comparing the two bf16 models element by element with each other cannot work: a weight gradient sums
over every token of the batch, both models round differently on the way (Inductor keeps a fused chain
in fp32 and rounds once, eager rounds after every op), and a gradient element near zero then differs
by more than any relative tolerance. What must hold instead: against a float64 copy of the same model
and batch, each parameter's gradient error ||g - g64|| / ||g64|| of the fast model stays within that of
the plain one (the kernel and compile may not make anything worse), and both stay at bf16's level.

    python tests/kernel_grads.py cpu|cuda   # prints one JSON line

On CPU the kernels run in Triton's interpreter, block by block in Python: there the batch is 2 sequences of 64
tokens (CPU_SIZES), an eighth of the GPU's 4 x 256 tokens (102 s of CI's test at 4 x 256; 3.4 times faster here).
The check keeps its teeth at that size: the kernel's gate gradient scaled by 1.03 fails it on 22 parameters
(errors 1.9-3.1e-2 against the plain model's 1.0-1.3e-2), the unchanged kernel passes.
"""

from __future__ import annotations

import copy
import json
import sys

import torch

CPU_SIZES = {"seq_len": 64, "batch": 2}  # the interpreter's (see above); a GPU runs the defaults
BF16_LEVEL = 5e-2  # a gradient error above this is no longer rounding: something is wrong
WORSE_BY = 1.5  # the fast model's error may be at most this much above the plain model's (plus a floor)
FLOOR = 2e-3


def gradient_errors(device: str, n_layer: int = 2, d_model: int = 256, seq_len: int = 256, batch: int = 4,
                    seed: int = 0, quack: bool = False) -> dict:
    from dscluster.train import perf
    from dscluster.train.model import GPT, preset_config

    torch.manual_seed(seed)
    cfg = preset_config("tiny", n_layer=n_layer, d_model=d_model, n_head=4, seq_len=seq_len)
    base = GPT(cfg).to(device)
    x = torch.randint(0, cfg.vocab_size, (batch, cfg.seq_len + 1), device=device)

    def grads(model, autocast: bool):
        with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
            loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        return loss.item(), {n: p.grad.double() for n, p in model.named_parameters()}

    exact = copy.deepcopy(base).double()
    exact.rotary.cos, exact.rotary.sin = exact.rotary.cos.double(), exact.rotary.sin.double()
    loss64, g64 = grads(exact, autocast=False)
    report = {"device": device, "loss_fp64": loss64, "models": {}}
    swapped = {"triton": "silu_mul+rotary_qkv", "norm": "silu_mul+rotary_qkv+add_rms_norm",
               "quack": "mlp_op+rotary_qkv"}
    variants = [("plain", None, False), ("compiled", None, True), ("compiled+kernel", "triton", True),
                ("compiled+norm", "norm", True)] + [("compiled+quack", "quack", True)] * quack  # QuACK: CUDA only
    for name, kernels, compiled in variants:
        model = copy.deepcopy(base)
        if kernels:  # the swap perf.use_kernels does on CUDA, here on any device (the interpreter on CPU)
            assert perf.swap_kernels(model, kernels) == swapped[kernels]
        if compiled:
            torch._dynamo.reset()
            perf.compile_model(model, "blocks", device)
        loss, g = grads(model, autocast=True)
        errors = {n: float((g[n] - g64[n]).norm() / g64[n].norm().clamp_min(1e-30)) for n in g}
        report["models"][name] = {"loss": loss, "errors": errors}
    return report


def verdict(report: dict) -> list[str]:
    """The parameters where the fast model is off: empty when the kernel and compile are correct."""
    plain = report["models"]["plain"]["errors"]
    bad = []
    for name in (n for n in report["models"] if n != "plain"):
        for param, err in report["models"][name]["errors"].items():
            if not err < BF16_LEVEL or err > WORSE_BY * plain[param] + FLOOR:
                bad.append(f"{name}: {param} error {err:.2e} (plain bf16 model: {plain[param]:.2e})")
    if not max(plain.values()) < BF16_LEVEL:
        bad.append(f"plain: worst error {max(plain.values()):.2e}")
    return bad


if __name__ == "__main__":
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    out = gradient_errors(device, **(CPU_SIZES if device == "cpu" else {}))
    out["bad"] = verdict(out)
    print(json.dumps(out))
