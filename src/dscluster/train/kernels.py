"""Hand-written GPU kernel for the one element-wise step that torch.compile leaves slow: SwiGLU.

The profile of the 1.3B model on an H200 (benchmarks/raw/profile_1.3b_mb16_gas8_cat_knob.txt) put
Inductor's SwiGLU backward at about 44% of HBM bandwidth: it writes the gate and up gradients as a
"pointwise cat" into the fused projection's gradient, one flat index at a time. Here each program
owns a block of columns of one row, so every load and store is a contiguous run of the row, and the
forward and backward each pass over memory once.

`silu_mul(gate_up, hidden)` takes the fused projection's output (..., 2*hidden) and returns
silu(gate) * up (..., hidden). It is a torch custom op: torch.compile treats it as one opaque call,
autograd uses the backward kernel below. The math runs in fp32 and rounds once, to the input dtype.
`available()` says whether it can run (CUDA tensors and an importable Triton); elsewhere the model
keeps the plain PyTorch expression, which this is checked against (tests/unit/test_kernels.py in
Triton's CPU interpreter, tests/gpu/test_gpu_kernels.py on a GPU).

Opt-in (`--kernels triton`) until benchmarks/block_kernels.py has timed it on an H200: written in a
session whose GPU time was spent, so its speed is a prediction (about 2x Inductor's backward, from the
bytes it moves), not yet a measurement.

(No `from __future__ import annotations` here: custom_op reads the real annotations for its schema.)
"""

import functools

import torch

BLOCK = 1024


@functools.cache
def available() -> bool:
    if not torch.cuda.is_available():
        return False
    try:
        import triton  # noqa: F401, PLC0415
    except Exception:  # noqa: BLE001 - no Triton: the plain expression is the fallback
        return False
    return True


def silu_mul_reference(gate_up: torch.Tensor, hidden: int) -> torch.Tensor:
    gate, up = gate_up.split(hidden, dim=-1)
    return torch.nn.functional.silu(gate) * up


@functools.cache
def _kernels():
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415

    @triton.jit
    def forward_kernel(gu_ptr, out_ptr, hidden, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < hidden
        gate = tl.load(gu_ptr + row * 2 * hidden + cols, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(gu_ptr + row * 2 * hidden + hidden + cols, mask=mask, other=0.0).to(tl.float32)
        out = gate * tl.sigmoid(gate) * up
        tl.store(out_ptr + row * hidden + cols, out.to(out_ptr.dtype.element_ty), mask=mask)

    @triton.jit
    def backward_kernel(gu_ptr, grad_out_ptr, grad_gu_ptr, hidden, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < hidden
        gate = tl.load(gu_ptr + row * 2 * hidden + cols, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(gu_ptr + row * 2 * hidden + hidden + cols, mask=mask, other=0.0).to(tl.float32)
        grad = tl.load(grad_out_ptr + row * hidden + cols, mask=mask, other=0.0).to(tl.float32)
        sig = tl.sigmoid(gate)
        silu = gate * sig
        grad_gate = grad * up * sig * (1.0 + gate * (1.0 - sig))
        grad_up = grad * silu
        dtype = grad_gu_ptr.dtype.element_ty
        tl.store(grad_gu_ptr + row * 2 * hidden + cols, grad_gate.to(dtype), mask=mask)
        tl.store(grad_gu_ptr + row * 2 * hidden + hidden + cols, grad_up.to(dtype), mask=mask)

    return forward_kernel, backward_kernel


def _grid(rows: int, hidden: int) -> tuple[int, int]:
    return (rows, (hidden + BLOCK - 1) // BLOCK)


@torch.library.custom_op("dscluster::silu_mul", mutates_args=())
def silu_mul(gate_up: torch.Tensor, hidden: int) -> torch.Tensor:
    gate_up = gate_up.contiguous()
    out = gate_up.new_empty(*gate_up.shape[:-1], hidden)
    rows = gate_up.numel() // (2 * hidden)
    if rows:
        _kernels()[0][_grid(rows, hidden)](gate_up, out, hidden, BLOCK=BLOCK, num_warps=4)
    return out


@silu_mul.register_fake
def _(gate_up, hidden):
    return gate_up.new_empty(*gate_up.shape[:-1], hidden)


@torch.library.custom_op("dscluster::silu_mul_backward", mutates_args=())
def silu_mul_backward(gate_up: torch.Tensor, grad_out: torch.Tensor, hidden: int) -> torch.Tensor:
    gate_up, grad_out = gate_up.contiguous(), grad_out.contiguous()
    grad_gate_up = torch.empty_like(gate_up)
    rows = gate_up.numel() // (2 * hidden)
    if rows:
        _kernels()[1][_grid(rows, hidden)](gate_up, grad_out, grad_gate_up, hidden, BLOCK=BLOCK, num_warps=4)
    return grad_gate_up


@silu_mul_backward.register_fake
def _(gate_up, grad_out, hidden):
    return torch.empty_like(gate_up)


def _setup_context(ctx, inputs, output):
    gate_up, hidden = inputs
    ctx.save_for_backward(gate_up)
    ctx.hidden = hidden


def _backward(ctx, grad_out):
    (gate_up,) = ctx.saved_tensors
    return silu_mul_backward(gate_up, grad_out, ctx.hidden), None


silu_mul.register_autograd(_backward, setup_context=_setup_context)
