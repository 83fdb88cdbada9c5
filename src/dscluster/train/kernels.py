"""Hand-written GPU kernels for the element-wise steps that torch.compile leaves slow: SwiGLU and rotary.

The profile of the 1.3B model on an H200 (benchmarks/raw/profile_1.3b_mb16_gas8_cat_knob.txt) put
Inductor's SwiGLU backward at about 44% of HBM bandwidth and its rotary backward at about 37%: both
write a fused projection's gradient as a "pointwise cat" (SwiGLU: the gate and up halves; rotary: q, k
and v stacked back into the QKV gradient), one flat index at a time with a masked load per input. Here
each program owns a block of contiguous columns of one row, so every load and store is a contiguous run,
and the forward and backward each pass over memory once.

- `silu_mul(gate_up, hidden)` takes the fused projection's output (..., 2*hidden) and returns
  silu(gate) * up (..., hidden).
- `rotary_qkv(qkv, cos, sin)` takes the QKV projection's output as (B, T, 3, H, hd) and the rotary
  tables (T, hd/2) and returns q and k rotated and v, each (B, T, H, hd) contiguous; its backward writes
  the three gradients straight into the (B, T, 3, H, hd) gradient of the projection.

Both are torch custom ops: torch.compile treats each as one opaque call, autograd uses the backward
kernels below. The math runs in fp32 and rounds once, to the input dtype. `available()` says whether they
can run (CUDA tensors and an importable Triton); elsewhere the model keeps the plain PyTorch
expressions, which these are checked against (tests/unit/test_kernels.py in Triton's CPU interpreter,
tests/gpu/test_gpu_kernels.py on a GPU). perf.use_kernels swaps them in; benchmarks/RESULTS.md has what
each measured on an H200.

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
    def backward_kernel(gu_ptr, grad_out_ptr, grad_gu_ptr, hidden, BLOCK: tl.constexpr, INTERLEAVED: tl.constexpr):
        """INTERLEAVED: gate and up column by column (gate i at 2i, up i at 2i + 1), QuACK's layout
        (train/mlp_kernels.py); else gate then up, the model's."""
        row = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < hidden
        if INTERLEAVED:
            at_gate = row * 2 * hidden + 2 * cols
            at_up = at_gate + 1
        else:
            at_gate = row * 2 * hidden + cols
            at_up = at_gate + hidden
        gate = tl.load(gu_ptr + at_gate, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(gu_ptr + at_up, mask=mask, other=0.0).to(tl.float32)
        grad = tl.load(grad_out_ptr + row * hidden + cols, mask=mask, other=0.0).to(tl.float32)
        sig = tl.sigmoid(gate)
        silu = gate * sig
        grad_gate = grad * up * sig * (1.0 + gate * (1.0 - sig))
        grad_up = grad * silu
        dtype = grad_gu_ptr.dtype.element_ty
        tl.store(grad_gu_ptr + at_gate, grad_gate.to(dtype), mask=mask)
        tl.store(grad_gu_ptr + at_up, grad_up.to(dtype), mask=mask)

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


def silu_mul_backward_into(gate_up: torch.Tensor, grad_out: torch.Tensor, hidden: int,
                           interleaved: bool = False) -> torch.Tensor:
    """The gradient of gate_up (..., 2·hidden) given that of the product (..., hidden); `interleaved`: gate
    and up column by column (QuACK's layout) instead of gate then up."""
    gate_up, grad_out = gate_up.contiguous(), grad_out.contiguous()
    grad_gate_up = torch.empty_like(gate_up)
    rows = gate_up.numel() // (2 * hidden)
    if rows:
        _kernels()[1][_grid(rows, hidden)](gate_up, grad_out, grad_gate_up, hidden, BLOCK=BLOCK,
                                           INTERLEAVED=interleaved, num_warps=4)
    return grad_gate_up


@torch.library.custom_op("dscluster::silu_mul_backward", mutates_args=())
def silu_mul_backward(gate_up: torch.Tensor, grad_out: torch.Tensor, hidden: int) -> torch.Tensor:
    return silu_mul_backward_into(gate_up, grad_out, hidden)


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


# ---- rotary positions on the QKV projection's output -------------------------------------------------
ROTARY_BLOCK = 512  # (x1, x2) pairs per program: hd/2 = 64 per head, 8 heads of a row


def rotary_qkv_reference(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """q, k rotated and v out of qkv (B, T, 3, H, hd); cos, sin (T, hd/2). The model's own expression."""
    q, k, v = qkv.unbind(2)
    cos, sin = cos[None, :, None].to(qkv.dtype), sin[None, :, None].to(qkv.dtype)

    def rotate(x):
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

    return rotate(q), rotate(k), v


@functools.cache
def _rotary_kernel():
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415

    @triton.jit
    def rotate_rows(src_ptr, src_row_stride, src_t_stride, src_head_stride, dst_ptr, dst_row_stride,
                    dst_t_stride, dst_head_stride, cos_ptr, sin_ptr, seq_len, pairs, half,
                    SIGN: tl.constexpr, ROTATE: tl.constexpr, BLOCK: tl.constexpr):
        """One token row of one of q, k, v: (x1, x2) -> (x1 c - SIGN x2 s, x2 c + SIGN x1 s) per head, or a
        copy. SIGN = -1 is the backward (the rotation by -theta). Rows are (b, t): row = b * seq_len + t."""
        row = tl.program_id(0).to(tl.int64)
        b = row // seq_len
        t = row % seq_len
        j = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = j < pairs
        head = j // half
        i = j % half
        src = src_ptr + b * src_row_stride + t * src_t_stride + head * src_head_stride + i
        dst = dst_ptr + b * dst_row_stride + t * dst_t_stride + head * dst_head_stride + i
        x1 = tl.load(src, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(src + half, mask=mask, other=0.0).to(tl.float32)
        if ROTATE:
            c = tl.load(cos_ptr + t * half + i, mask=mask, other=1.0).to(tl.float32)
            s = tl.load(sin_ptr + t * half + i, mask=mask, other=0.0).to(tl.float32) * SIGN
            y1 = x1 * c - x2 * s
            y2 = x2 * c + x1 * s
        else:
            y1 = x1
            y2 = x2
        dtype = dst_ptr.dtype.element_ty
        tl.store(dst, y1.to(dtype), mask=mask)
        tl.store(dst + half, y2.to(dtype), mask=mask)

    return rotate_rows


def _rotate_into(src: torch.Tensor, dst: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, sign: int,
                 rotate: bool) -> None:
    """src, dst: (B, T, H, hd) with unit stride in hd (any other strides)."""
    B, T, H, hd = src.shape
    pairs = H * hd // 2
    if B * T == 0:
        return
    grid = (B * T, (pairs + ROTARY_BLOCK - 1) // ROTARY_BLOCK)
    _rotary_kernel()[grid](src, src.stride(0), src.stride(1), src.stride(2), dst, dst.stride(0), dst.stride(1),
                           dst.stride(2), cos, sin, T, pairs, hd // 2, SIGN=sign, ROTATE=rotate,
                           BLOCK=ROTARY_BLOCK, num_warps=4)


def rotate_qk(src: torch.Tensor, dst: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, sign: int) -> None:
    """Rotate parts 0 and 1 (q and k) of `src` (B, T, >=2, H, hd) into the same parts of `dst`; `sign` -1 is
    the backward. `dst` may be `src` itself (in place: each program reads its pairs before it writes them);
    cos and sin are fp32 (T, hd/2), contiguous."""
    for part in (0, 1):
        _rotate_into(src[:, :, part], dst[:, :, part], cos, sin, sign, True)


def unit_last(t: torch.Tensor) -> torch.Tensor:
    """`t`, or a contiguous copy where its last dimension is strided (the kernels read rows)."""
    return t if t.stride(-1) == 1 else t.contiguous()


@torch.library.custom_op("dscluster::rotary_qkv", mutates_args=())
def rotary_qkv(qkv: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor,
                                                                                   torch.Tensor]:
    qkv = unit_last(qkv)
    cos, sin = cos.float().contiguous(), sin.float().contiguous()
    outs = [qkv.new_empty(qkv.shape[0], qkv.shape[1], qkv.shape[3], qkv.shape[4]) for _ in range(3)]
    for part, out in enumerate(outs):
        _rotate_into(qkv[:, :, part], out, cos, sin, 1, part < 2)
    return outs[0], outs[1], outs[2]


@rotary_qkv.register_fake
def _(qkv, cos, sin):
    shape = (qkv.shape[0], qkv.shape[1], qkv.shape[3], qkv.shape[4])
    return qkv.new_empty(shape), qkv.new_empty(shape), qkv.new_empty(shape)


@torch.library.custom_op("dscluster::rotary_qkv_backward", mutates_args=())
def rotary_qkv_backward(grad_q: torch.Tensor, grad_k: torch.Tensor, grad_v: torch.Tensor, cos: torch.Tensor,
                        sin: torch.Tensor) -> torch.Tensor:
    B, T, H, hd = grad_q.shape
    grad_qkv = grad_q.new_empty(B, T, 3, H, hd)
    cos, sin = cos.float().contiguous(), sin.float().contiguous()
    for part, grad in enumerate((grad_q, grad_k, grad_v)):
        _rotate_into(unit_last(grad), grad_qkv[:, :, part], cos, sin, -1, part < 2)
    return grad_qkv


@rotary_qkv_backward.register_fake
def _(grad_q, grad_k, grad_v, cos, sin):
    B, T, H, hd = grad_q.shape
    return grad_q.new_empty(B, T, 3, H, hd)


def _rotary_setup_context(ctx, inputs, output):
    _qkv, cos, sin = inputs
    ctx.save_for_backward(cos, sin)


def _rotary_backward(ctx, grad_q, grad_k, grad_v):
    cos, sin = ctx.saved_tensors
    return rotary_qkv_backward(grad_q, grad_k, grad_v, cos, sin), None, None


rotary_qkv.register_autograd(_rotary_backward, setup_context=_rotary_setup_context)
