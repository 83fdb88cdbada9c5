"""The residual add and the RMSNorm after it as one hand-written Triton kernel, forward and backward.

Each transformer block adds a branch's output to the residual stream and normalizes the sum for the next
branch. Inductor runs that as several passes over memory (the 1.3B profile on an H200 in
benchmarks/RESULTS.md: about 1 ms per block and micro-batch of 24 x 2048 tokens, where one pass over a
(49152, 2048) bf16 tensor takes 0.05 ms), and its backward reads the gradient and the input a second
time for the weight's gradient. Here:

- forward: one program per row reads x and the residual once and writes their sum (the new residual
  stream) and the normalized sum once, plus the row's 1/rms in fp32 for the backward;
- backward: a fixed grid of programs (a few per SM), each walking many rows, reads the sum's gradient
  (from the residual path downstream), the normalized output's gradient, the sum and 1/rms once and
  writes the input gradient once; each program keeps its share of the weight's gradient in registers and
  writes one fp32 row of a (programs, d) buffer, summed afterwards. No atomics: the result is the same
  on every run.

`add_rms_norm(x, residual, weight, eps)` returns (x + residual, rms_norm(x + residual) * weight);
`residual=None` is the plain norm (the first block's, of the embedding), returning x itself as the sum.
The gradient of the sum reaches x and the residual as one tensor (the add's gradient is the identity).
`add_rms_norm_reference` is the same in PyTorch's ops, what the model runs unless perf.swap_kernels puts
the kernel in. The math runs in fp32 and rounds once to the output dtype; the sum is rounded to its dtype
before it is normalized, as the reference does. Checked against the reference in Triton's CPU
interpreter (tests/unit/test_norm_kernels.py) and on a GPU (tests/gpu/test_gpu_kernels.py).

(No `from __future__ import annotations` here: custom_op reads the real annotations for its schema.)
"""

import functools

import torch
import torch.nn.functional as F

# Programs of the backward per streaming multiprocessor, at most: enough to hide memory latency, few
# enough that the weight-gradient buffer (programs x d fp32) stays small next to one activation. Fewer
# where fewer fit on an SM at once (registers): a second wave of these long programs would double the time.
BACKWARD_PROGRAMS_PER_SM = 4


def add_rms_norm_reference(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor,
                           eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(x + residual, rms_norm(x + residual) * weight) in PyTorch's ops: the model's own expression."""
    s = x if residual is None else x + residual
    return s, F.rms_norm(s, weight.shape, weight, eps)


def _block(d: int) -> int:
    return max(16, 1 << (d - 1).bit_length())


def _warps(block: int) -> int:
    """8 columns per thread (one 16-byte load of bf16): about 48 registers in the backward at every width
    (sm_90), so four 2048-wide programs, or two 4096-wide ones, fit on one SM together."""
    return min(32, max(1, block // 256))


@functools.cache
def _kernels():
    import triton  # noqa: PLC0415
    import triton.language as tl  # noqa: PLC0415

    @triton.jit
    def add_rms_norm_forward_kernel(x_ptr, res_ptr, sum_ptr, out_ptr, w_ptr, rstd_ptr, d, eps,
                       HAS_RESIDUAL: tl.constexpr, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < d
        s = tl.load(x_ptr + row * d + cols, mask=mask, other=0.0).to(tl.float32)
        if HAS_RESIDUAL:
            s += tl.load(res_ptr + row * d + cols, mask=mask, other=0.0).to(tl.float32)
            rounded = s.to(sum_ptr.dtype.element_ty)
            tl.store(sum_ptr + row * d + cols, rounded, mask=mask)
            s = rounded.to(tl.float32)  # normalize the sum the next layers see, as the reference does
        rstd = 1.0 / tl.sqrt(tl.sum(s * s, axis=0) / d + eps)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * d + cols, (s * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)
        tl.store(rstd_ptr + row, rstd)

    @triton.jit
    def add_rms_norm_backward_kernel(grad_sum_ptr, grad_out_ptr, s_ptr, rstd_ptr, w_ptr, grad_ptr, dw_ptr, rows, d,
                        HAS_GRAD_SUM: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        programs = tl.num_programs(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < d
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dw = tl.zeros((BLOCK,), dtype=tl.float32)
        offset = pid.to(tl.int64) * d  # of the row in 64 bits, stepped by the loop: rows * d may pass 2^31
        step = programs.to(tl.int64) * d
        for r in range(pid, rows, programs):
            dy = tl.load(grad_out_ptr + offset + cols, mask=mask, other=0.0).to(tl.float32)
            s = tl.load(s_ptr + offset + cols, mask=mask, other=0.0).to(tl.float32)
            rstd = tl.load(rstd_ptr + r)
            s_hat = s * rstd
            g = dy * w
            grad = rstd * (g - s_hat * (tl.sum(g * s_hat, axis=0) / d))
            if HAS_GRAD_SUM:
                grad += tl.load(grad_sum_ptr + offset + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(grad_ptr + offset + cols, grad.to(grad_ptr.dtype.element_ty), mask=mask)
            dw += dy * s_hat
            offset += step
        tl.store(dw_ptr + pid.to(tl.int64) * d + cols, dw, mask=mask)

    # named apart from SwiGLU's forward_kernel and backward_kernel, so a profile's table tells them apart
    return add_rms_norm_forward_kernel, add_rms_norm_backward_kernel


def _rows(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(-1, t.shape[-1])


def _forward(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor, eps: float,
             s: torch.Tensor | None, out: torch.Tensor, rstd: torch.Tensor) -> None:
    d = x.shape[-1]
    rows = x.numel() // d if d else 0
    if not rows:
        return
    block = _block(d)
    xr = _rows(x)
    _kernels()[0][(rows,)](xr, xr if residual is None else _rows(residual), xr if s is None else s, out,
                           weight.contiguous(), rstd, d, eps, HAS_RESIDUAL=residual is not None, BLOCK=block,
                           num_warps=_warps(block))


def _sum_dtype(x: torch.Tensor, residual: torch.Tensor) -> torch.dtype:
    return torch.promote_types(x.dtype, residual.dtype)


@torch.library.custom_op("dscluster::add_rms_norm_forward", mutates_args=())
def add_rms_norm_forward(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                         eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(sum, normed, rstd): the sum in x and the residual's common dtype, rstd (rows,) in fp32."""
    dtype = _sum_dtype(x, residual)
    s = torch.empty(x.shape, dtype=dtype, device=x.device)
    out = torch.empty(x.shape, dtype=torch.promote_types(dtype, weight.dtype), device=x.device)
    rstd = torch.empty(x.shape[:-1], dtype=torch.float32, device=x.device)
    _forward(x, residual, weight, eps, s, out, rstd)
    return s, out, rstd


@add_rms_norm_forward.register_fake
def _(x, residual, weight, eps):
    dtype = _sum_dtype(x, residual)
    return (x.new_empty(x.shape, dtype=dtype), x.new_empty(x.shape, dtype=torch.promote_types(dtype, weight.dtype)),
            x.new_empty(x.shape[:-1], dtype=torch.float32))


@torch.library.custom_op("dscluster::rms_norm_forward", mutates_args=())
def rms_norm_forward(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(normed, rstd) of x: the plain norm (an op may not return its input, so the sum is not an output)."""
    out = torch.empty(x.shape, dtype=torch.promote_types(x.dtype, weight.dtype), device=x.device)
    rstd = torch.empty(x.shape[:-1], dtype=torch.float32, device=x.device)
    _forward(x, None, weight, eps, None, out, rstd)
    return out, rstd


@rms_norm_forward.register_fake
def _(x, weight, eps):
    return (x.new_empty(x.shape, dtype=torch.promote_types(x.dtype, weight.dtype)),
            x.new_empty(x.shape[:-1], dtype=torch.float32))


# (device, dtypes, d, constants) -> (SMs, backward programs one SM holds at once, whether that figure
# came from the compiled kernel rather than BACKWARD_PROGRAMS_PER_SM alone)
_RESIDENT: dict = {}


def _backward_programs(rows: int, device: torch.device, args: list, constants: dict) -> int:
    """One wave of programs: SMs x the programs an SM holds at once (by the compiled kernel's registers and
    threads, at most BACKWARD_PROGRAMS_PER_SM), never more than the rows. On CPU (Triton's interpreter,
    the tests) a few programs, each still walking several rows."""
    if device.type != "cuda":
        return max(1, min(rows, 8))
    d = args[-1]
    key = (device, tuple(getattr(a, "dtype", None) for a in args), d, rows % 16 == 0, tuple(sorted(constants.items())))
    if key not in _RESIDENT:
        props = torch.cuda.get_device_properties(device)
        per_sm, measured = BACKWARD_PROGRAMS_PER_SM, False
        try:
            compiled = _kernels()[1].warmup(*args, grid=(1,), **constants)
            compiled._init_handles()
            threads = 32 * constants["num_warps"]
            regs = (compiled.n_regs + 7) // 8 * 8  # allocated in units of 8 per thread (256 per warp)
            per_sm = min(per_sm, getattr(props, "regs_per_multiprocessor", 65536) // max(1, regs * threads),
                         getattr(props, "max_threads_per_multi_processor", 2048) // threads)
            measured = True
        except Exception:  # noqa: BLE001 - no occupancy figures from this Triton: the fixed count
            pass
        _RESIDENT[key] = (props.multi_processor_count, max(1, per_sm), measured)
    sms, per_sm, _measured = _RESIDENT[key]
    return max(1, min(rows, sms * per_sm))


@torch.library.custom_op("dscluster::rms_norm_backward", mutates_args=())
def rms_norm_backward(grad_sum: torch.Tensor | None, grad_out: torch.Tensor, s: torch.Tensor,
                      rstd: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(grad of the sum: grad_sum + the norm's input gradient, in the sum's dtype; grad of the weight)."""
    d = s.shape[-1]
    rows = s.numel() // d if d else 0
    grad = torch.empty(s.shape, dtype=s.dtype, device=s.device)
    if not rows:
        return grad, torch.zeros_like(weight)
    block = _block(d)
    g_out = _rows(grad_out)
    constants = dict(HAS_GRAD_SUM=grad_sum is not None, BLOCK=block, num_warps=_warps(block))
    rstd = rstd.contiguous()
    args = [g_out if grad_sum is None else _rows(grad_sum), g_out, _rows(s), rstd, weight.contiguous(), grad,
            rstd, rows, d]  # rstd in the weight-gradient buffer's place (an fp32 tensor) until its size is known
    programs = _backward_programs(rows, s.device, args, constants)
    args[6] = partial = torch.empty(programs, d, dtype=torch.float32, device=s.device)
    _kernels()[1][(programs,)](*args, **constants)
    return grad, partial.sum(0).to(weight.dtype)


@rms_norm_backward.register_fake
def _(grad_sum, grad_out, s, rstd, weight):
    return torch.empty_like(s), torch.empty_like(weight)


def _add_setup_context(ctx, inputs, output):
    _x, _residual, weight, _eps = inputs
    s, _out, rstd = output
    ctx.save_for_backward(s, rstd, weight)
    ctx.set_materialize_grads(False)  # an unused sum (the final norm's) sends no gradient: none is read


def _add_backward(ctx, grad_sum, grad_out, _grad_rstd):
    s, rstd, weight = ctx.saved_tensors
    if grad_out is None:  # only the sum was used
        return grad_sum, grad_sum, None, None
    grad, grad_weight = rms_norm_backward(grad_sum, grad_out, s, rstd, weight)
    return grad, grad, grad_weight, None  # the add's gradient is the same for both inputs: one tensor


add_rms_norm_forward.register_autograd(_add_backward, setup_context=_add_setup_context)


def _norm_setup_context(ctx, inputs, output):
    x, weight, _eps = inputs
    _out, rstd = output
    ctx.save_for_backward(x, rstd, weight)
    ctx.set_materialize_grads(False)


def _norm_backward(ctx, grad_out, _grad_rstd):
    x, rstd, weight = ctx.saved_tensors
    if grad_out is None:
        return None, None, None
    grad, grad_weight = rms_norm_backward(None, grad_out, x, rstd, weight)
    return grad, grad_weight, None


rms_norm_forward.register_autograd(_norm_backward, setup_context=_norm_setup_context)


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor | None, weight: torch.Tensor,
                 eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The kernel's (x + residual, rms_norm(x + residual) * weight); residual None: (x, rms_norm(x) * weight).

    The plain norm returns x itself as the sum, so where x also feeds the residual stream (the first
    block) autograd adds the stream's gradient to the norm's: one extra element-wise pass, in one block."""
    if residual is None:
        normed, _rstd = rms_norm_forward(x, weight, eps)
        return x, normed
    s, normed, _rstd = add_rms_norm_forward(x, residual, weight, eps)
    return s, normed
