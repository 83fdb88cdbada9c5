"""Shared arithmetic for the GPU benchmarks: FLOPs per token, MFU, the matmul ceiling, and the
environment fingerprint that every result line carries.

One formula for every row (trainer, HF baseline, recipe config), so their MFU figures compare:
FLOPs/token = 6·N + 12·L·d·T (PaLM / nanoGPT / torchtitan convention, full-attention term even though
causal attention computes half of it), with N = the parameters that take part in matrix products
(every parameter except embedding lookup tables; a tied input/output embedding counts once, as the
output projection).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from typing import Any

# Dense bf16 peak of the H100/H200 SXM (datasheet, no sparsity). The one figure MFU divides by.
H200_PEAK_BF16_FLOPS = 989e12


def flops_per_token(n_matmul_params: int, n_layer: int, d_model: int, seq_len: int) -> float:
    return 6.0 * n_matmul_params + 12.0 * n_layer * d_model * seq_len


def throughput_fields(tokens: int, seconds: float, flops_tok: float, world_size: int = 1,
                      peak: float = H200_PEAK_BF16_FLOPS) -> dict[str, float]:
    """tokens/s (all GPUs), per GPU, TFLOP/s per GPU and MFU from a timed window."""
    tok_s = tokens / seconds
    per_gpu = tok_s / world_size
    tflops = per_gpu * flops_tok / 1e12
    return {"tokens_per_s": round(tok_s, 1), "tokens_per_s_per_gpu": round(per_gpu, 1),
            "tflops_per_gpu": round(tflops, 1), "mfu": round(tflops * 1e12 / peak, 4)}


def matmul_params(model: Any) -> int:
    """Parameters that take part in matrix products: all minus nn.Embedding tables, except an
    embedding table that is also the output projection (tied weights are counted once)."""
    import torch

    embedding_ids = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    output_ids = set()
    for m in model.modules():
        if isinstance(m, torch.nn.Linear):
            output_ids.add(id(m.weight))
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        if id(p) in embedding_ids and id(p) not in output_ids:
            continue
        total += p.numel()
    return total


def cuda_ms(fn, iters: int, warmup: int = 3, before=None) -> float:
    """Milliseconds per call of `fn`: `warmup` calls first, then `before()` (say, a reset of the peak-memory
    counter), then CUDA events around `iters` calls."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    if before is not None:
        before()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def matmul_ceiling(sizes: tuple[int, ...] = (8192, 16384), reps: int = 20) -> dict[str, Any]:
    """The GPU's measured bf16 matmul rate: random normal operands, median of CUDA-event-timed
    products after warm-up, best over a few square sizes. MFU / this = the fraction of what the
    chip actually delivers on the easiest possible matrix work."""
    import torch

    best: dict[str, Any] = {}
    per_size = {}
    for n in sizes:
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            torch.matmul(a, b, out=out)
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            torch.matmul(a, b, out=out)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        times.sort()
        tflops = 2 * n**3 / times[len(times) // 2] / 1e12
        per_size[str(n)] = round(tflops, 1)
        if tflops > best.get("tflops", 0):
            best = {"tflops": round(tflops, 1), "n": n}
        del a, b, out
    torch.cuda.empty_cache()
    return {"bench": "matmul_ceiling", "dtype": "bf16", "tflops": best["tflops"], "best_n": best["n"],
            "per_size_tflops": per_size, "fraction_of_peak": round(best["tflops"] * 1e12 / H200_PEAK_BF16_FLOPS, 4)}


def environment() -> dict[str, Any]:
    """Hardware and software fingerprint for RESULTS.md."""
    info: dict[str, Any] = {"python": platform.python_version(), "host": platform.node()}
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            info["gpu"] = torch.cuda.get_device_name(0)
            info["gpu_count"] = torch.cuda.device_count()
            info["gpu_mem_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    except Exception as exc:  # noqa: BLE001 - the fingerprint must never stop a benchmark
        info["torch_error"] = str(exc)
    for mod in ("deepspeed", "transformers", "triton"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            info[mod] = None
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,power.limit,clocks.max.sm",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        info["nvidia_smi"] = smi.stdout.strip().splitlines()
    except Exception:  # noqa: BLE001
        pass
    return info


def emit(record: dict[str, Any], out_path: str | None = None) -> None:
    """One JSON line to stdout (and appended to out_path): the benchmark's only output format."""
    record = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **record}
    line = json.dumps(record, sort_keys=False)
    print(line, flush=True)
    if out_path:
        with open(out_path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def ensure_single_process_env() -> None:
    """deepspeed.initialize in a plain `python script.py` needs the torch.distributed env vars; the
    launchers (deepspeed/torchrun) set them, a single process gets world size 1 on a free port."""
    if "RANK" in os.environ:
        return
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1",
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def log(msg: str) -> None:
    if rank() == 0:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def peak_mem_gib() -> float | None:
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if torch.cuda.is_available() else None
