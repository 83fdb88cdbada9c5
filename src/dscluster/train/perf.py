"""Speed options of the reference trainer, applied to the GPT from outside so the model code stays plain.

- compile: `torch.compile` per transformer block ("blocks": the identical blocks share one compiled
  graph, so compile time does not grow with depth) or of the whole model, in place (state_dict keys
  and checkpoints unchanged), falling back to eager for any frame that fails to compile.
- attention: which SDPA kernel family runs (auto = PyTorch's choice: cuDNN, then FlashAttention, on H100/H200);
  FlashAttention-4 (`fa4`) is swapped into the model instead (train/attention.py).
- activation checkpointing: each block keeps only its input and recomputes the rest in backward.
- micro-batch search: the largest micro-batch whose forward+backward fits next to the optimizer state.
- BatchPrefetcher: the next micro-batches are gathered and pinned on a thread, copied asynchronously,
  so the GPU never waits for the data loader.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import threading
from collections.abc import Callable, Iterator

import torch
from torch import nn

COMPILE_MODES = ("auto", "off", "blocks", "model")
# Below this size compiling takes longer than it saves in a short run (the tiny demo trains in ~2 s).
COMPILE_MIN_PARAMS = 50_000_000
ATTENTION_BACKENDS = ("auto", "cudnn", "flash", "efficient", "math", "fa4")  # fa4: train/attention.py
KERNEL_MODES = ("auto", "off", "triton", "swiglu", "norm", "quack")
# What "auto" swaps in (see auto_kernels): "quack" where QuACK's MLP can run, measured fastest on H200s
# (benchmarks/RESULTS.md), AUTO_KERNELS elsewhere.
AUTO_KERNELS = "triton"


def large_enough_to_build_for(model: nn.Module) -> bool:
    """Whether `model` has at least COMPILE_MIN_PARAMS parameters: below that, building compiled code or
    QuACK's kernels takes longer than they save, so "auto" leaves both out."""
    return sum(p.numel() for p in model.parameters()) >= COMPILE_MIN_PARAMS


def compile_model(model: nn.Module, mode: str, device_type: str = "cuda", zero_stage: int = 0) -> str:
    """Compile in place; returns what was done ("blocks", "model", or "off (reason)").

    "auto" = "blocks" on CUDA when Triton is importable and the model has at least COMPILE_MIN_PARAMS
    parameters, else off (on CPU the C++ compile costs more than it saves for the small models a CPU
    trains; under ZeRO-3 the parameters are gathered by hooks that torch.compile does not trace well).
    """
    if mode not in COMPILE_MODES:
        raise ValueError(f"unknown compile mode {mode!r}: choose {', '.join(COMPILE_MODES)}")
    if mode == "off":
        return "off"
    if mode == "auto":
        if device_type != "cuda":
            return "off (CPU)"
        if zero_stage == 3:
            return "off (ZeRO-3)"
        if not large_enough_to_build_for(model):
            return "off (small model)"
        try:
            import triton  # noqa: F401, PLC0415
        except Exception:  # noqa: BLE001 - no Triton: eager is the clean fallback
            return "off (Triton not importable)"
        mode = "blocks"
    # A frame that fails to compile runs eagerly instead of stopping training: the clean fallback.
    torch._dynamo.config.suppress_errors = True
    # Every micro-batch has the same shape; dynamic-shape kernels would be slower for no gain.
    if mode == "blocks":
        for block in model.blocks:
            block.compile(dynamic=False)
    else:
        model.compile(dynamic=False)
    if getattr(model, "ce_kernel", None) is not None:
        # The large-vocabulary loss's per-chunk softmax and gradient: one fused pass over the logits.
        model.ce_kernel = torch.compile(model.ce_kernel, dynamic=False)
    return mode


def auto_kernels(model: nn.Module, device_type: str = "cuda", precision: str = "auto", zero_stage: int = 0) -> str:
    """What `--kernels auto` swaps in: "quack" (rotary and the MLP as QuACK's GEMMs with SwiGLU in their
    epilogues, train/mlp_kernels.py) where it can run (installed, Hopper or newer, bf16, not ZeRO-3) for a
    model of at least COMPILE_MIN_PARAMS parameters (below that its kernels take longer to build than they
    save) whose width and MLP width are multiples of 8, else AUTO_KERNELS ("triton"). Measured at 1.3B on H200s (benchmarks/RESULTS.md): 0.3-0.7% faster
    than "triton" in the same run, for 11.6 GiB less peak memory at micro-batch 24."""
    from dscluster.train import mlp_kernels  # noqa: PLC0415

    if large_enough_to_build_for(model) and \
            mlp_kernels.refusal_here(device_type, precision, zero_stage, getattr(model, "cfg", None)) is None:
        return "quack"
    return AUTO_KERNELS


def use_kernels(model: nn.Module, mode: str, device_type: str = "cuda", precision: str = "auto",
                zero_stage: int = 0) -> str:
    """Swap the hand-written GPU kernels (train/kernels.py, train/norm_kernels.py, train/mlp_kernels.py) into
    the model; returns what was done. Before compile_model: the compiled blocks then call each kernel as one
    opaque op. "triton" = SwiGLU and rotary, "norm" = those and the fused residual add + RMSNorm, "swiglu" =
    the SwiGLU kernel only, "quack" = rotary and the MLP as QuACK's GEMMs (refused where it cannot run, as
    --attention fa4 is), "auto" = `auto_kernels` on CUDA with Triton importable, else PyTorch's expressions.
    Measured at 1.3B on an H200 (benchmarks/RESULTS.md): the SwiGLU kernel about 2% faster than Inductor's,
    the rotary kernel about 1% more, QuACK's MLP 0.3-0.7% more. "norm" is not what auto runs: its two kernels
    take 35 ms less GPU time per optimizer step of 8 micro-batches than Inductor's five per block, but in the
    same run the step was 0.27% slower (the GPU idled 32 ms more per step in its profile)."""
    from dscluster.train import kernels  # noqa: PLC0415

    if mode not in KERNEL_MODES:
        raise ValueError(f"unknown kernels mode {mode!r}: choose {', '.join(KERNEL_MODES)}")
    if mode == "off":
        return "off"
    if mode == "quack":
        from dscluster.train import mlp_kernels  # noqa: PLC0415

        mlp_kernels.check(device_type, precision, zero_stage, getattr(model, "cfg", None))
    if device_type != "cuda":
        return "off (CPU)"
    if not kernels.available():
        return "off (Triton not importable)"
    if mode == "auto":
        chosen = auto_kernels(model, device_type, precision, zero_stage)
        return (swap_kernels(model, chosen) or "off (no SwiGLU)") + f" (auto: {chosen})"
    return swap_kernels(model, mode) or "off (no SwiGLU)"


def swap_kernels(model: nn.Module, mode: str = "triton") -> str:
    """The swap itself, on any device (Triton's CPU interpreter runs it on CPU tensors in the tests):
    "triton" = SwiGLU and rotary, "norm" = those and the residual add + RMSNorm, "swiglu" = SwiGLU only,
    "quack" = rotary and the whole MLP with SwiGLU in its products' epilogues (train/mlp_kernels.py; QuACK
    runs on CUDA only, so the tests swap it on meta tensors). Returns the names swapped, "+"-joined."""
    from dscluster.train import kernels, norm_kernels  # noqa: PLC0415

    swaps = {"silu_mul": kernels.silu_mul}
    if mode == "quack":
        from dscluster.train import mlp_kernels  # noqa: PLC0415

        swaps = {"mlp_op": mlp_kernels.swiglu_mlp}
    if mode in ("triton", "norm", "quack"):
        swaps["rotary_qkv"] = kernels.rotary_qkv
    if mode == "norm":
        swaps["add_rms_norm"] = norm_kernels.add_rms_norm
    done = []
    for attr, kernel in swaps.items():
        owners = [m for m in model.modules() if hasattr(m, attr)]
        for m in owners:
            setattr(m, attr, kernel)
        if owners:
            done.append(attr)
    return "+".join(done)


@contextlib.contextmanager
def eager(model: nn.Module) -> Iterator[None]:
    """Run compiled modules eagerly inside (evaluation, sampling): other shapes would recompile."""
    stashed = [(m, m._compiled_call_impl) for m in model.modules() if getattr(m, "_compiled_call_impl", None)]
    for m, _ in stashed:
        m._compiled_call_impl = None
    try:
        yield
    finally:
        for m, impl in stashed:
            m._compiled_call_impl = impl


def sdpa_backends(name: str) -> list:
    from torch.nn.attention import SDPBackend  # noqa: PLC0415

    return {
        "cudnn": [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION],
        "flash": [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION],
        "efficient": [SDPBackend.EFFICIENT_ATTENTION],
        "math": [SDPBackend.MATH],
    }[name]


@contextlib.contextmanager
def attention_backend(name: str) -> Iterator[None]:
    """Restrict SDPA to one kernel family (with fallbacks) for the forward and backward inside."""
    if name not in ATTENTION_BACKENDS:
        raise ValueError(f"unknown attention backend {name!r}: choose {', '.join(ATTENTION_BACKENDS)}")
    if name in ("auto", "fa4") or not torch.cuda.is_available():  # fa4 is swapped into the model instead
        yield
        return
    from torch.nn.attention import sdpa_kernel  # noqa: PLC0415

    with sdpa_kernel(sdpa_backends(name), set_priority=True):
        yield


def checkpoint_blocks(model: nn.Module) -> None:
    """Activation checkpointing per block. Patches forward on the instance, so state_dict keys (and
    checkpoints) do not change.

    A block returns the residual stream and its MLP output unsummed, for the next block to add in its
    first norm; kept as they are, both would stay alive between forward and backward, twice what one
    checkpointed block needs. So here each block adds them itself, inside the checkpoint, and hands on
    the sum with no branch: one tensor kept per block, as before the blocks deferred their last add (the
    add then runs on its own, not fused with the next norm)."""
    from torch.utils.checkpoint import checkpoint  # noqa: PLC0415

    for block in model.blocks:
        block.forward = functools.partial(checkpoint, functools.partial(_summed, block.forward), use_reentrant=False)


def _summed(forward, x, branch, rotary):
    x, branch = forward(x, branch, rotary)
    return x + branch, None


def optimizer_state_bytes_per_param(zero_stage: int, world_size: int) -> float:
    """Bytes per parameter that DeepSpeed adds beside bf16 weights and grads: fp32 master weights,
    Adam m and v, and the fp32 gradient partition, sharded over ranks from ZeRO stage 1 on."""
    per = 16.0
    return per / world_size if zero_stage >= 1 else per


def find_micro_batch(model: nn.Module, seq_len: int, vocab_size: int, device: torch.device, *,
                     zero_stage: int = 1, world_size: int = 1, upper: int = 64, headroom: float = 0.10,
                     log: Callable[[str], None] = lambda _m: None) -> int:
    """Largest micro-batch (powers of two and 1.5x steps, up to `upper`) whose bf16 forward+backward fits
    on this GPU next to the optimizer state, keeping `headroom` of the memory free. Tried eagerly on a
    bf16 copy of the model (compiled code needs less, so the answer is on the safe side)."""
    candidates = sorted({c for b in (1, 2, 4, 8, 16, 32, 64, 128) for c in (b, b * 3 // 2) if 1 <= c <= upper},
                        reverse=True)
    trial = _bf16_copy(model, device)
    n_params = sum(p.numel() for p in trial.parameters())
    total = torch.cuda.get_device_properties(device).total_memory
    reserve = int(n_params * optimizer_state_bytes_per_param(zero_stage, world_size) + headroom * total)
    best = 1
    try:
        for mb in candidates:
            if _fits(trial, mb, seq_len, vocab_size, device, reserve):
                best = mb
                break
            log(f"micro-batch {mb}: does not fit")
    finally:
        del trial
        torch.cuda.empty_cache()
    return best


def _bf16_copy(model: nn.Module, device: torch.device) -> nn.Module:
    import copy  # noqa: PLC0415

    return copy.deepcopy(model).to(device=device, dtype=torch.bfloat16)


def _fits(model: nn.Module, mb: int, seq_len: int, vocab_size: int, device: torch.device, reserve: int) -> bool:
    ballast = None
    try:
        ballast = torch.empty(reserve, dtype=torch.uint8, device=device)
        x = torch.randint(0, vocab_size, (mb, seq_len + 1), device=device)
        loss = model(x[:, :-1], x[:, 1:])
        loss.backward()
        torch.cuda.synchronize(device)
        return True
    except torch.OutOfMemoryError:
        return False
    finally:
        del ballast
        model.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()


class BatchPrefetcher:
    """Gathers the coming micro-batches on a thread (pinned host memory), so that taking one is an
    asynchronous copy: the GPU never waits on the data loader. Order is exactly the sampler's.

    make(step, micro) -> numpy array; keys walk micro 0..accum-1 of each step from `start_step`.
    """

    def __init__(self, make: Callable[[int, int], object], start_step: int, accum: int, device: torch.device,
                 depth: int = 4):
        self.make, self.accum, self.device = make, accum, device
        self.pin = device.type == "cuda"
        self._q: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(start_step,), daemon=True, name="batch-prefetch")
        self._thread.start()

    def _work(self, step: int) -> None:
        try:
            while not self._stop.is_set():
                for micro in range(self.accum):
                    t = torch.from_numpy(self.make(step, micro))
                    if self.pin:
                        t = t.pin_memory()
                    while not self._stop.is_set():
                        try:
                            self._q.put(((step, micro), t), timeout=0.1)
                            break
                        except queue.Full:
                            continue
                step += 1
        except BaseException as exc:  # noqa: BLE001 - re-raised in the training thread by next()
            self._q.put((None, exc))

    def next(self, step: int, micro: int) -> torch.Tensor:
        key, t = self._q.get()
        if key is None:
            raise t
        if key != (step, micro):
            raise RuntimeError(f"prefetcher out of order: wanted {(step, micro)}, got {key}")
        return t.to(self.device, non_blocking=self.pin)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
