"""The SwiGLU MLP with SwiGLU inside its matrix products' epilogues: QuACK's CuTe-DSL GEMMs (PyPI
`quack-kernels`, which FlashAttention-4 installs with it: the `fa4` extra), Hopper and newer.

Apart, the MLP is three passes over its (M, 2·hidden) pre-activation: the gate/up product writes it, the
SwiGLU kernel reads it and writes the (M, hidden) product, and in the backward the down projection's input
gradient is written, read back with the pre-activation, and the gate/up gradient written. Here:

- forward: the gate/up product applies SwiGLU as it stores its tiles, writing the pre-activation and the
  activation in one pass (both kept for the backward); the down product reads the activation.
- backward (`BACKWARD`): "mixed" (the default) runs QuACK's first product with SwiGLU's derivative in its
  epilogue, which makes the activation again there (so the activation is not kept between forward and
  backward), then the three plain products by cuBLAS; "quack" runs all four as QuACK's; "cublas" runs
  cuBLAS's products around the SwiGLU kernel of train/kernels.py, which reads QuACK's pre-activation in its
  own order, and keeps the activation.

Measured at 1.3B, micro-batch 24, accumulation 16 on H200s (benchmarks/RESULTS.md, sessions 8 and 9): with
the mixed backward the trainer is 0.3-0.7% faster than the Triton kernels in the same run, in three runs
on two machines, and needs 11.6 GiB less peak memory; with QuACK's own backward it was 0.6% slower, with
cuBLAS's 0.4%. Alone, the MLP's forward is 4-8% faster than cuBLAS + the SwiGLU kernel and its forward +
backward 1% slower (the trainer's GPU runs at its power limit, where the passes over memory saved count
for more than alone). So `--kernels auto` runs it where it can run (`perf.auto_kernels`).

The model's weights stay as they are: gate_up.weight (2·hidden, d) with the gate rows first (QuACK's
"concat" layout), down.weight (d, hidden). The pre-activation QuACK keeps is interleaved (gate and up
column by column); only the backwards here read it.

Wrapped as custom ops with fakes and an autograd formula, as FlashAttention-4 is (train/attention.py): the
compiled blocks call each as one opaque op. `refusal` is pure (train/hopper.py).
"""

from __future__ import annotations

import torch

from dscluster.errors import ConfigError
from dscluster.i18n import tr
from dscluster.train import hopper

QUACK_MIN_CAPABILITY = hopper.HOPPER
QUACK_MODULE = "quack.gemm_interface"
# False: QuACK's default tile configuration per architecture (no autotuning at the first call, which
# compiles every candidate configuration of every shape); True: its autotuner, cached on disk.
TUNED = False
_GATED = "swiglu"
# The backward: "mixed" = QuACK's first product with SwiGLU's derivative in its epilogue (the activation
# made again there, not kept: what saves the memory), then the three plain ones by cuBLAS (measured fastest);
# "quack" = all four QuACK's; "cublas" = cuBLAS products around the SwiGLU kernel (train/kernels.py) on
# QuACK's pre-activation, the activation kept from the forward.
BACKWARD = "mixed"
BACKWARDS = ("mixed", "quack", "cublas")


def quack_installed() -> bool:
    return hopper.installed(QUACK_MODULE)


QUACK = hopper.HopperKernel(choice="--kernels quack", setting="--kernels", package="QuACK", module=QUACK_MODULE,
                            pip="quack-kernels", auto="--kernels auto", older_fix="use --kernels auto")


def refusal(device_type: str, capability: tuple[int, int] | None, installed: bool, precision: str = "auto",
            zero_stage: int = 0, widths: tuple[int, int] | None = None) -> ConfigError | None:
    """Why `--kernels quack` cannot run here, or None. `widths`: the model's (d_model, MLP hidden), if known."""
    if precision == "fp8":
        return ConfigError(tr("--kernels quack runs the MLP's matrix products in bf16, which --precision fp8 "
                              "would run in float8"), tr("use --kernels auto with --precision fp8"), setting="--kernels")
    if zero_stage == 3:  # its op reads both weights whole, where ZeRO-3 gathers a layer's only when it is called
        return ConfigError(tr("--kernels quack reads the MLP's weights whole, which ZeRO-3 keeps partitioned"),
                           tr("use --kernels auto under ZeRO-3, or ZeRO stage 1 or 2"), setting="--kernels")
    if widths and any(w % 8 for w in widths):  # TMA's row strides: multiples of 16 bytes (8 bf16 values)
        return ConfigError(tr("--kernels quack needs the model width and the MLP width to be multiples of 8; "
                              "they are {d} and {h}", d=widths[0], h=widths[1]),
                           tr("use --kernels auto, or a --d-model that is a multiple of 8"), setting="--kernels")
    return hopper.refusal(QUACK, device_type, capability, installed)


def refusal_here(device_type: str, precision: str = "auto", zero_stage: int = 0, cfg=None) -> ConfigError | None:
    """`refusal` for this process (its GPU, whether QuACK is installed) and the model of `cfg` (a GPTConfig,
    or None when the widths are not known)."""
    widths = (cfg.d_model, cfg.hidden) if cfg is not None else None
    return refusal(device_type, *hopper.here(QUACK, device_type), precision, zero_stage, widths)


def check(device_type: str, precision: str = "auto", zero_stage: int = 0, cfg=None) -> None:
    """Raise `refusal_here`'s error."""
    refused = refusal_here(device_type, precision, zero_stage, cfg)
    if refused:
        raise refused


def _quack():
    _key_unknown_types()
    from quack import gemm_interface  # noqa: PLC0415

    return gemm_interface


def _key_unknown_types() -> None:
    """QuACK fingerprints every global an epilogue function reaches, to key its compiled kernels, and refuses
    a type it does not know. The op wrappers of nvidia-cutlass-dsl 4.8 reach objects QuACK 0.6.5 does not
    know (a ContextVar of debug-location transforms, a method descriptor of code objects), none of which
    changes the generated math: without this its epilogue library fails to import. Such an object is keyed
    by its type and name (its qualified name, or a ContextVar's name) instead, once per process."""
    from quack.gemm_runtime import identity  # noqa: PLC0415

    if getattr(identity.semantic_value_key, "keys_unknown_types", False):
        return
    plain = identity.semantic_value_key

    def semantic_value_key(value, seen):
        try:
            return plain(value, seen)
        except TypeError:  # plain recurses through this wrapper, so only the unknown leaf lands here
            kind = type(value)
            name = getattr(value, "__qualname__", None) or getattr(value, "name", None)
            return ("opaque", kind.__module__, kind.__qualname__, name if isinstance(name, str) else None)

    semantic_value_key.keys_unknown_types = True
    identity.semantic_value_key = semantic_value_key


@torch.library.custom_op("dscluster::swiglu_mlp", mutates_args=())
def swiglu_mlp_op(x: torch.Tensor, w_gate_up: torch.Tensor,
                  w_down: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x (..., d), w_gate_up (2·hidden, d), w_down (d, hidden) -> (out (..., d), the pre-activation
    (M, 2·hidden), interleaved, and the activation (M, hidden): both for the backward)."""
    q = _quack()
    x2 = x.reshape(-1, x.shape[-1])
    preact, postact = q.gemm_gated(x2, w_gate_up.T, activation=_GATED, store_preact=True, tuned=TUNED,
                                   concat_layout=("B",))
    out = q.gemm(postact, w_down.T, tuned=TUNED)
    return out.view(*x.shape[:-1], w_down.shape[0]), preact, postact


@swiglu_mlp_op.register_fake
def _(x, w_gate_up, w_down):
    m = x.numel() // x.shape[-1]
    return (x.new_empty(*x.shape[:-1], w_down.shape[0]), x.new_empty(m, w_gate_up.shape[0]),
            x.new_empty(m, w_down.shape[1]))


def _cublas_products(dout: torch.Tensor, x2: torch.Tensor, w_gate_up: torch.Tensor, dpreact: torch.Tensor,
                     postact: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(grad x (M, d), grad w_gate_up, grad w_down) as cuBLAS products on QuACK's interleaved pre-activation
    gradient: the gate/up weight is read (and its gradient written) in that order through one copy each way
    (2·hidden·d elements, against M·2·hidden for the activations)."""
    hidden = postact.shape[-1]
    dw_down = dout.T @ postact
    w_interleaved = w_gate_up.view(2, hidden, -1).transpose(0, 1).reshape(2 * hidden, -1)
    dx = dpreact @ w_interleaved
    dw_gate_up = (dpreact.T @ x2).view(hidden, 2, -1).transpose(0, 1).reshape(2 * hidden, -1)
    return dx, dw_gate_up, dw_down


@torch.library.custom_op("dscluster::swiglu_mlp_backward", mutates_args=())
def swiglu_mlp_backward(grad_out: torch.Tensor, x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor,
                        preact: torch.Tensor, products: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(grad x, grad w_gate_up, grad w_down): QuACK's product with SwiGLU's derivative in its epilogue, then
    the three plain products by QuACK (`products` "quack") or cuBLAS ("cublas")."""
    q = _quack()
    dout = grad_out.reshape(-1, grad_out.shape[-1]).contiguous()
    x2 = x.reshape(-1, x.shape[-1])
    dpreact, postact = q.gemm_dgated(dout, w_down, preact, activation=_GATED, dynamic_scheduler=True, tuned=TUNED)
    if products == "cublas":
        dx, dw_gate_up, dw_down = _cublas_products(dout, x2, w_gate_up, dpreact, postact)
        return dx.view(x.shape), dw_gate_up, dw_down
    dw_down = q.gemm(dout.T, postact, out_dtype=w_down.dtype, dynamic_scheduler=True, tuned=TUNED)
    dx = q.gemm(dpreact, w_gate_up, dynamic_scheduler=True, concat_layout=("B",), tuned=TUNED)
    dw_gate_up = q.gemm(dpreact.T, x2, out_dtype=w_gate_up.dtype, dynamic_scheduler=True, concat_layout=("out",),
                        tuned=TUNED)
    return dx.view(x.shape), dw_gate_up, dw_down


@swiglu_mlp_backward.register_fake
def _(grad_out, x, w_gate_up, w_down, preact, products):
    return torch.empty_like(x), torch.empty_like(w_gate_up), torch.empty_like(w_down)


@torch.library.custom_op("dscluster::swiglu_mlp_backward_cublas", mutates_args=())
def swiglu_mlp_backward_cublas(grad_out: torch.Tensor, x: torch.Tensor, w_gate_up: torch.Tensor,
                               w_down: torch.Tensor, preact: torch.Tensor,
                               postact: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The backward as cuBLAS products around the SwiGLU kernel, on QuACK's interleaved pre-activation."""
    from dscluster.train import kernels  # noqa: PLC0415

    d = w_down.shape[0]
    dout = grad_out.reshape(-1, d).contiguous()
    dpreact = kernels.silu_mul_backward_into(preact, dout @ w_down, w_down.shape[1], interleaved=True)
    dx, dw_gate_up, dw_down = _cublas_products(dout, x.reshape(-1, x.shape[-1]), w_gate_up, dpreact, postact)
    return dx.view(x.shape), dw_gate_up, dw_down


@swiglu_mlp_backward_cublas.register_fake
def _(grad_out, x, w_gate_up, w_down, preact, postact):
    return torch.empty_like(x), torch.empty_like(w_gate_up), torch.empty_like(w_down)


def _setup_context(ctx, inputs, output):
    x, w_gate_up, w_down = inputs
    _out, preact, postact = output
    ctx.backward = BACKWARD
    # QuACK's backward makes the activation again in its epilogue: it is not kept
    ctx.save_for_backward(x, w_gate_up, w_down, preact, postact if BACKWARD == "cublas" else None)


def _backward(ctx, grad_out, _grad_preact, _grad_postact):
    x, w_gate_up, w_down, preact, postact = ctx.saved_tensors
    if ctx.backward == "cublas":
        return swiglu_mlp_backward_cublas(grad_out, x, w_gate_up, w_down, preact, postact)
    return swiglu_mlp_backward(grad_out, x, w_gate_up, w_down, preact, "cublas" if ctx.backward == "mixed" else "quack")


swiglu_mlp_op.register_autograd(_backward, setup_context=_setup_context)


def swiglu_mlp(x: torch.Tensor, w_gate_up: torch.Tensor, w_down: torch.Tensor) -> torch.Tensor:
    """down(silu(gate) * up) with gate, up = x @ w_gate_up.T split at hidden: the model's SwiGLU MLP. Under
    autocast its inputs are cast as autocast casts a linear layer's (the op itself is below autocast)."""
    if torch.is_autocast_enabled(x.device.type):
        dtype = torch.get_autocast_dtype(x.device.type)
        x, w_gate_up, w_down = x.to(dtype), w_gate_up.to(dtype), w_down.to(dtype)
    return swiglu_mlp_op(x, w_gate_up, w_down)[0]
