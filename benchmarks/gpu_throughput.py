"""GPU throughput of the reference trainer next to a plain HF baseline, the recipe's ds_config and the
chip's own matmul ceiling; checkpoint speed next to the disk's. JSON lines out, one per measurement.

    python benchmarks/gpu_throughput.py run --suite full --out results.jsonl         # one GPU
    deepspeed --num_gpus 2 benchmarks/gpu_throughput.py run --suite scaling --out results.jsonl
    python benchmarks/gpu_throughput.py summarize results.jsonl                      # the table

A case is `kind:key=value,...`, e.g. `trainer:preset=1.3b,mb=16,compile=blocks,attn=cudnn,zero=1`.
kinds: trainer (the reference GPT with the trainer's speed options), hf (benchmarks/hf_baseline.py),
recipe (the reference GPT under the recipe's ds_config: fp32, Adam, micro-batch 1), ceiling (bf16
matmul), disk (dd with fsync), ckpt (save/load of the full training state, fsync'd, after a trainer case).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_metrics as gm  # noqa: E402

SEQ = 2048
SUITES: dict[str, list[str]] = {
    # what one GPU measures for RESULTS.md
    "full": [
        "ceiling:",
        "trainer:preset=124m,mb=32", "trainer:preset=1.3b,mb=16", "trainer:preset=2.7b,mb=8",
        "hf:preset=124m,mb=32", "hf:preset=1.3b,mb=16", "hf:preset=2.7b,mb=8",
        "recipe:preset=124m", "recipe:preset=1.3b",
    ],
    "scaling": ["trainer:preset=1.3b,mb=16,zero=2", "hf:preset=1.3b,mb=16,zero=2"],
    "ckpt": ["disk:gb=16", "ckpt:preset=1.3b"],
}


@dataclass
class Case:
    kind: str
    preset: str = "1.3b"
    seq: int = SEQ
    mb: int = 8
    gas: int = 1
    zero: int = 1
    compile: str = "blocks"
    attn: str = "auto"
    ckpt_act: int = 0
    opt: str = "torch_fused"  # torch_fused | ds_fused (DeepSpeed FusedAdam) | ds_adam (recipe: "Adam" in ds_config)
    bf16: int = 1
    bucket_mb: int = 200
    overlap: int = 1  # ZeRO-1/2: overlap_comm (0: reduce at the accumulation boundary only, no per-micro-batch hooks)
    steps: int = 8
    warmup: int = 3
    gb: int = 16
    ser: str = "both"  # ckpt: default | fast | fast-nopin | both | all (torch.save's default path, or the trainer's)
    gpus: int = 0  # cli: processes (GPUs) for the launcher; 0 = all visible
    prof: int = 0  # 1: also profile one optimizer step, kernel table written to $BENCH_PROF_DIR
    vocab: int = 0  # 0: the trainer's byte vocabulary (257); 50257: GPT-2's (trainer and hf alike)
    inductor: str = ""  # knobs, "+"-joined: cdt, autotune, cat (see inductor_knobs)
    kernels: str = "auto"  # trainer: auto = the trainer's default, triton = the SwiGLU and rotary kernels, norm = those + the fused add+RMSNorm, swiglu = SwiGLU only, quack = rotary + the MLP with SwiGLU in QuACK's GEMM epilogues, off = Inductor's
    mlptune: int = 0  # trainer, QuACK's MLP: 1 = QuACK's autotuned GEMM configurations (0: its default tiles)
    mlpbwd: str = "mixed"  # trainer, QuACK's MLP (kernels=quack, or auto where it runs): its backward, mixed, quack or cublas (mlp_kernels.BACKWARD)
    dssync: int = 1  # trainer: 0 = DeepSpeed's throughput timer without its GPU synchronization per micro-batch (1: its default)
    blas: str = "default"  # trainer: cuBLAS or cuBLASLt for the matrix products (torch.backends.cuda.preferred_blas_library)
    qkv: str = "fused"  # trainer: fused = the rotary kernel and FlashAttention-4 as one op where both run, split = apart
    layout: str = "bthd"  # trainer: bthd = the model's attention layout, bhtd = the earlier one (block_kernels.py)
    precision: str = "bf16"  # trainer, cli: fp8 = torchao float8 linear layers (train/fp8.py), bf16 = none
    log: int = 0  # cli: steps between metrics lines (0: half the steps)
    label: str = ""

    @classmethod
    def parse(cls, spec: str) -> Case:
        kind, _, rest = spec.partition(":")
        kw: dict = {"kind": kind}
        types = {f.name: f.type for f in fields(cls)}
        for item in filter(None, rest.split(",")):
            key, _, val = item.partition("=")
            if key not in types:
                raise SystemExit(f"case {spec!r}: unknown key {key!r} (known: {', '.join(types)})")
            kw[key] = int(val) if types[key] in ("int", int) else val
        return cls(**kw)


def ds_config_for(c: Case) -> dict:
    cfg = {
        "train_micro_batch_size_per_gpu": c.mb,
        "gradient_accumulation_steps": c.gas,
        "gradient_clipping": 1.0,
        "steps_per_print": 10**9,
        "zero_optimization": {"stage": c.zero},
    }
    if not c.dssync:
        cfg["timers"] = {"throughput": {"enabled": True, "synchronized": False}}
    if c.bf16:
        cfg["bf16"] = {"enabled": True}
    if c.zero in (1, 2):
        bucket = c.bucket_mb * 2**20
        cfg["zero_optimization"].update({"overlap_comm": bool(c.overlap), "contiguous_gradients": True,
                                         "reduce_bucket_size": bucket, "allgather_bucket_size": bucket})
    if c.opt == "ds_fused":
        cfg["optimizer"] = {"type": "AdamW", "params": {"lr": 2e-4, "betas": [0.9, 0.95], "weight_decay": 0.1}}
    elif c.opt == "ds_adam":
        cfg["optimizer"] = {"type": "Adam", "params": {"lr": 2e-4}}
    return cfg


INDUCTOR_KNOBS = {
    # coordinate-descent tuning of the generated kernels' block sizes
    "cdt": {"coordinate_descent_tuning": True},
    # Triton GEMM templates (with fused epilogues) autotuned against cuBLAS
    "autotune": {"max_autotune_gemm": True, "coordinate_descent_tuning": True},
    # Hopper's TMA-fed persistent Triton GEMM templates among the autotuned choices
    "tma": {"triton.enable_persistent_tma_matmul": True},
    # concatenations (SwiGLU's and QKV's gradients) as one kernel writing every slice, instead of a
    # "pointwise cat" that evaluates each input's expression per output element with masked loads
    "cat": {"max_pointwise_cat_inputs": 1, "max_complex_pointwise_cat_inputs": 1},
}
_INDUCTOR_DEFAULTS: dict = {}


def inductor_knobs(spec: str) -> None:
    """Set the named Inductor options for the next compile, every other known knob back to default."""
    import torch._inductor.config as cfg

    for knob in INDUCTOR_KNOBS.values():
        for key in knob:
            owner, _, leaf = key.rpartition(".")
            target = getattr(cfg, owner) if owner else cfg
            if hasattr(target, leaf):
                _INDUCTOR_DEFAULTS.setdefault(key, getattr(target, leaf))
                setattr(target, leaf, _INDUCTOR_DEFAULTS[key])
    for name in filter(None, spec.split("+")):
        for key, value in INDUCTOR_KNOBS[name].items():
            owner, _, leaf = key.rpartition(".")
            target = getattr(cfg, owner) if owner else cfg
            if hasattr(target, leaf):
                setattr(target, leaf, value)


def build_model(c: Case):
    from dscluster.train.model import GPT, preset_config

    cfg = preset_config(c.preset, seq_len=c.seq, vocab_size=c.vocab or None)
    return GPT(cfg), cfg


def run_trainer(c: Case, out: str | None, keep_engine: bool = False):
    """The reference GPT + the trainer's speed options under DeepSpeed, synthetic byte tokens on GPU."""
    gm.ensure_single_process_env()
    import deepspeed
    import torch

    from dscluster.train import perf
    from dscluster.train.model import flops_per_token

    device = "cuda" if torch.cuda.is_available() else "cpu"  # CPU: only to check the code path
    if device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    torch.manual_seed(0)
    torch._dynamo.reset()
    model, cfg = build_model(c)
    if c.ckpt_act:
        perf.checkpoint_blocks(model)
    inductor_knobs(c.inductor)
    if device == "cuda":
        torch.backends.cuda.preferred_blas_library(c.blas)
    if c.kernels in ("quack", "auto"):
        from dscluster.train import mlp_kernels

        if c.mlpbwd not in mlp_kernels.BACKWARDS:
            raise SystemExit(f"mlpbwd={c.mlpbwd!r}: choose {', '.join(mlp_kernels.BACKWARDS)}")
        mlp_kernels.TUNED, mlp_kernels.BACKWARD = bool(c.mlptune), c.mlpbwd
    kernels_ran = perf.use_kernels(model, c.kernels if c.kind == "trainer" else "off", device,
                                   "fp8" if c.precision == "fp8" else "auto", c.zero)
    attention_ran = "sdpa"
    if c.kind == "trainer":
        from dscluster.train import attention

        attention_ran = attention.use_attention(model, c.attn, device)
        if c.qkv == "split":
            for layer in model.modules():
                if getattr(layer, "attend_qkv", None) is not None:
                    layer.attend_qkv = None
            attention_ran = attention_ran.replace(", with the rotary kernel as one op", ", the rotary kernel apart")
    if c.layout == "bhtd":
        import block_kernels

        for block in model.blocks:
            block.attn.forward = block_kernels.bhtd_attention_forward.__get__(block.attn)
    if c.precision == "fp8":
        from dscluster.train import fp8

        fp8.check()
        fp8.convert(model)
    compiled = perf.compile_model(model, c.compile if c.kind == "trainer" else "off")
    ds_config = ds_config_for(c)
    optimizer = None
    if "optimizer" not in ds_config:
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4, betas=(0.9, 0.95), weight_decay=0.1,
                                      fused=True)
    t_init = time.perf_counter()
    engine, *_ = deepspeed.initialize(model=model, optimizer=optimizer,
                                      model_parameters=model.parameters(), config=ds_config)
    init_s = time.perf_counter() - t_init
    world = int(os.environ.get("WORLD_SIZE", "1"))
    g = torch.Generator(device=device).manual_seed(1234 + gm.rank())
    data = [torch.randint(0, cfg.vocab_size, (c.mb, c.seq + 1), device=device, generator=g) for _ in range(4)]

    def step(i: int):
        loss = None
        with perf.attention_backend(c.attn):
            for m in range(c.gas):
                batch = data[(i * c.gas + m) % len(data)]
                loss = engine(batch[:, :-1], batch[:, 1:])
                engine.backward(loss)
                engine.step()
        return loss

    t0 = time.perf_counter()
    first_loss = float(step(0).item())
    first_step_s = time.perf_counter() - t0  # includes compilation
    for i in range(1, c.warmup):
        step(i)
    gm.sync()
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for i in range(c.steps):
        loss = step(c.warmup + i)  # no .item() inside the window: no host sync
    gm.sync()
    elapsed = time.perf_counter() - t0
    tokens = c.steps * c.gas * c.mb * c.seq * world
    rec = {"bench": c.kind, "label": c.label, "preset": c.preset, "world_size": world, "seq_len": c.seq,
           "micro_batch": c.mb, "grad_accum": c.gas, "zero_stage": c.zero,
           **gm.throughput_fields(tokens, elapsed, flops_per_token(cfg, c.seq), world),
           "step_s": round(elapsed / c.steps, 4), "first_step_s": round(first_step_s, 1),
           "init_s": round(init_s, 1), "loss_first": round(first_loss, 4), "loss_last": round(float(loss.item()), 4),
           "peak_mem_gib": gm.peak_mem_gib(), "compile": compiled, "attention_ran": attention_ran,
           "kernels_ran": kernels_ran,
           "config": {**asdict(c), "ds_config": ds_config, "params": sum(p.numel() for p in model.parameters())}}
    if gm.rank() == 0:
        gm.emit(rec, out)
    if c.prof and gm.rank() == 0:
        profile_step(step, c, rec)
    if keep_engine:
        return engine, rec
    release(engine)
    return None, rec


def profile_step(step, c: Case, rec: dict) -> None:
    """Where one optimizer step's GPU time goes: the top kernels by total CUDA time."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    gm.sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step(10**6)
        gm.sync()
    table = prof.key_averages().table(sort_by="cuda_time_total", row_limit=40, max_name_column_width=90)
    name = f"profile_{c.preset}_mb{c.mb}_{c.compile}_{c.attn}_z{c.zero}_ac{c.ckpt_act}.txt"
    directory = os.environ.get("BENCH_PROF_DIR", ".")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "w") as fh:
        fh.write(json.dumps({k: v for k, v in rec.items() if k != "config"}) + "\n" + table + "\n"
                 + "\n".join(idle_report(prof.events())) + "\n")
    del torch


def idle_report(events, top: int = 12) -> list[str]:
    """Where the GPU waits: its busy time (the union of kernel intervals) against the span from the first
    kernel to the last, then the longest gaps, each with the kernels around it and the innermost host-side
    operations running at its middle (a synchronising call there names the cause)."""
    kernels, host = [], []
    for e in events:
        span = (e.time_range.start, e.time_range.end)
        (kernels if str(e.device_type).endswith("CUDA") else host).append((span, e.name))
    if not kernels:
        return ["idle: no kernels recorded"]
    kernels.sort()
    busy, gaps = 0.0, []
    (start, end), prev = kernels[0][0], kernels[0][1]
    for (s0, s1), name in kernels[1:]:
        if s0 > end:
            busy += end - start
            gaps.append((s0 - end, end, s0, prev, name))
            start, end = s0, s1
        else:
            end = max(end, s1)
        prev = name if s1 >= end else prev
    busy += end - start
    span = kernels[-1][0][1] - kernels[0][0][0]
    lines = [f"idle: GPU busy {busy / 1e3:.1f} ms of {span / 1e3:.1f} ms ({100 * busy / span:.1f}%), "
             f"{len(gaps)} gaps, {sum(g[0] for g in gaps) / 1e3:.1f} ms idle; longest:"]
    for gap, g0, g1, before, after in sorted(gaps, reverse=True)[:top]:
        mid = (g0 + g1) / 2
        inner = sorted((h1 - h0, name) for (h0, h1), name in host if h0 <= mid <= h1)[:4]
        lines.append(f"  {gap / 1e3:7.2f} ms after {before[:60]!r} before {after[:60]!r}; host: "
                     + ", ".join(f"{name[:50]} ({d / 1e3:.2f} ms)" for d, name in inner))
    return lines


def release(engine) -> None:
    import torch

    if hasattr(engine, "destroy"):
        engine.destroy()
    del engine
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def run_disk(c: Case, out: str | None, directory: str) -> dict:
    """The disk's own sequential write speed: dd from /dev/zero with fsync before dd reports."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "dd.bin")
    count = c.gb * 16  # 64 MiB blocks
    t0 = time.perf_counter()
    res = subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=64M", f"count={count}", "conv=fsync"],
                         capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    os.remove(path)
    rec = {"bench": "disk_write", "path": directory, "bytes": count * 64 * 2**20,
           "gb_per_s": round(count * 64 * 2**20 / elapsed / 1e9, 3), "dd": res.stderr.strip().splitlines()[-1:],
           "command": f"dd if=/dev/zero of={path} bs=64M count={count} conv=fsync"}
    gm.emit(rec, out)
    return rec


def drop_page_cache() -> bool:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return True
    except OSError:
        return False


def run_ckpt(c: Case, out: str | None, directory: str) -> list[dict]:
    """Save (through the trainer's commit protocol: DeepSpeed save, fsync, COMMIT.json) and load the full
    training state (bf16 weights, fp32 master weights, Adam moments), with default and fast serialization."""
    import torch.distributed as dist

    from dscluster.train import checkpoint

    c.steps, c.warmup = 2, 2
    engine, _ = run_trainer(Case(**{**asdict(c), "kind": "trainer", "compile": "off", "mb": 4}), None,
                            keep_engine=True)
    recs = []
    real_commit, commit_s = checkpoint.commit, []

    def timed_commit(*args, **kwargs):  # the commit's fsync of what the save left in the page cache
        t = time.perf_counter()
        real_commit(*args, **kwargs)
        commit_s.append(time.perf_counter() - t)

    checkpoint.commit = timed_commit
    modes = {"both": ("default", "fast"), "all": ("default", "fast", "fast-nopin")}.get(c.ser, c.ser.split("+"))
    for mode in modes:
        checkpoint.PINNED_D2H = mode != "fast-nopin"
        commit_s.clear()
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory, exist_ok=True)
        drop_page_cache()
        gm.sync()
        t0 = time.perf_counter()
        checkpoint.save(engine, Path(directory), 1, rank=gm.rank(), world_size=int(os.environ.get("WORLD_SIZE", "1")),
                        zero_stage=c.zero, keep=0, client_state={"step": 1}, barrier=dist.barrier,
                        fast_serialization=mode != "default")
        t_save = time.perf_counter() - t0
        step_dir = os.path.join(directory, checkpoint.tag_for(1))
        nbytes = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(step_dir) for f in fs)
        dropped = drop_page_cache()
        t0 = time.perf_counter()
        engine.load_checkpoint(directory, tag=checkpoint.tag_for(1))
        gm.sync()
        t_load = time.perf_counter() - t0
        rec = {"bench": "checkpoint", "preset": c.preset, "serialization": mode,
               "bytes": nbytes, "save_s": round(t_save, 2), "save_gb_per_s": round(nbytes / t_save / 1e9, 3),
               "commit_fsync_s": round(sum(commit_s), 2), "load_s": round(t_load, 2), "load_gb_per_s": round(nbytes / t_load / 1e9, 3),
               "load_cold_cache": dropped, "path": directory,
               "engine": "dscluster.train.checkpoint.save (DeepSpeed save_checkpoint + fsync + COMMIT.json)"}
        gm.emit(rec, out)
        recs.append(rec)
    checkpoint.commit, checkpoint.PINNED_D2H = real_commit, True
    release(engine)
    shutil.rmtree(directory, ignore_errors=True)
    return recs


def run_cli(c: Case, out: str | None, scratch: str) -> dict | None:
    """The real trainer entry point (`python -m dscluster.train`, data loader, metrics.jsonl and all), one
    process per GPU through DeepSpeed's launcher; the figure is the trainer's own last metrics window."""
    import torch

    name = f"cli-{c.preset}-{c.label or c.precision}"  # two cases can run at once (a loss comparison)
    run_dir = os.path.join(scratch, name)
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    cfg = ds_config_for(c)  # no optimizer section: the trainer's default (torch's fused AdamW on GPU)
    cfg_path = os.path.join(run_dir, "ds_config.json")
    with open(cfg_path, "w") as fh:
        json.dump(cfg, fh)
    steps = max(c.steps, 2 * c.warmup)
    trainer_args = ["--preset", c.preset, "--seq-len", str(c.seq), "--steps", str(steps), "--log-interval",
                    str(c.log or steps // 2), "--eval-interval", "0", "--eval-batches", "4", "--sample-tokens", "0",
                    "--run-dir", run_dir, "--save-dir", os.path.join("/dev/shm", f"{name}-ckpt"),
                    "--resume", "never", "--deepspeed", "--deepspeed_config", cfg_path]
    help_text = subprocess.run([sys.executable, "-m", "dscluster.train", "--help"], capture_output=True, text=True).stdout
    if "--compile" in help_text:
        trainer_args += ["--compile", c.compile, "--attention", c.attn]
        if c.ckpt_act:
            trainer_args.append("--activation-checkpointing")
    if c.precision == "fp8":
        trainer_args += ["--precision", "fp8"]
    trainer_args += ["--kernels", c.kernels]
    gpus = c.gpus or torch.cuda.device_count()
    argv = [sys.executable, "-m", "deepspeed.launcher.runner", "--num_gpus", str(gpus), "--master_port",
            str(29500 + os.getpid() % 1000), "--module", "dscluster.train", *trainer_args]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    shutil.rmtree(os.path.join("/dev/shm", f"{name}-ckpt"), ignore_errors=True)
    metrics = [json.loads(x) for x in open(os.path.join(run_dir, "metrics.jsonl")) if x.strip()] \
        if os.path.exists(os.path.join(run_dir, "metrics.jsonl")) else []
    windows = [m for m in metrics if "tokens_per_s" in m]
    if proc.returncode != 0 or not windows:
        gm.emit({"bench": "error", "case": f"cli {asdict(c)}", "error": (proc.stdout + proc.stderr)[-1500:]}, out)
        return None
    last = windows[-1]
    tps = last["tokens_per_s"]
    evals = [m["val_loss"] for m in metrics if m.get("val_loss") is not None]
    rec = {"bench": "trainer_cli", "label": c.label, "preset": c.preset, "world_size": gpus, "seq_len": c.seq,
           "micro_batch": c.mb, "grad_accum": c.gas, "zero_stage": c.zero, "tokens_per_s": tps,
           "tokens_per_s_per_gpu": round(tps / gpus, 1), "tflops_per_gpu": last.get("tflops"), "mfu": last.get("mfu"),
           "peak_mem_gib": last.get("gpu_mem_gb"), "loss_first": windows[0]["loss"], "loss_last": last["loss"],
           "val_loss_last": evals[-1] if evals else None, "losses": [[m.get("step"), m["loss"]] for m in windows],
           "compile": c.compile if "--compile" in help_text else "trainer default", "wall_s": round(wall, 1),
           "config": {**asdict(c), "ds_config": cfg, "argv": " ".join(argv[1:])}}
    gm.emit(rec, out)
    return rec


def run_case(c: Case, out: str | None, scratch: str) -> None:
    if c.kind in ("trainer", "recipe"):
        if c.kind == "recipe":  # the recipe's ds_config: fp32 weights, DeepSpeed Adam, micro-batch 1
            c.mb, c.bf16, c.opt, c.compile, c.zero = 1, 0, "ds_adam", "off", 0
        run_trainer(c, out)
    elif c.kind == "hf":
        import hf_baseline

        from dscluster.train.model import preset_config

        vocab = preset_config(c.preset, vocab_size=c.vocab or None).padded_vocab
        hf_baseline.run(c.preset, c.seq, c.mb, c.zero, c.steps, c.warmup, vocab, out, c.gas)
    elif c.kind == "cli":
        run_cli(c, out, scratch)
    elif c.kind == "ceiling":
        gm.emit(gm.matmul_ceiling(), out)
    elif c.kind == "disk":
        run_disk(c, out, scratch)
    elif c.kind == "ckpt":
        run_ckpt(c, out, os.path.join(scratch, "ckpt"))
    else:
        raise SystemExit(f"unknown case kind {c.kind!r}")


def cmd_run(a) -> int:
    specs = list(a.case or []) + [s for name in (a.suite or []) for s in SUITES[name]]
    if gm.rank() == 0:
        gm.emit({"bench": "environment", **gm.environment(), "argv": sys.argv}, a.out)
    failed = 0
    for spec in specs:
        c = Case.parse(spec)
        gm.log(f"case {spec}")
        try:
            run_case(c, a.out, a.scratch)
        except Exception as exc:  # noqa: BLE001 - one failing case (OOM, say) must not lose the rest
            failed += 1
            if gm.rank() == 0:
                gm.emit({"bench": "error", "case": spec, "error": f"{type(exc).__name__}: {str(exc)[:500]}"}, a.out)
            gc.collect()
            try:
                import torch

                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--local_rank", type=int, default=None, help=argparse.SUPPRESS)  # the launchers add it
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure cases, print JSON lines")
    r.add_argument("--suite", action="append", choices=sorted(SUITES))
    r.add_argument("--case", action="append", help="kind:key=value,... (repeatable)")
    r.add_argument("--out", help="append the JSON lines to this file too")
    r.add_argument("--scratch", default=os.environ.get("BENCH_SCRATCH", "/tmp/dscluster-bench"),
                   help="directory for dd and checkpoint files (the disk being measured)")
    s = sub.add_parser("summarize", help="markdown table from JSON lines")
    s.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        return cmd_run(a)
    import gpu_summary

    records = [{**json.loads(line), "_source": f} for f in a.files for line in open(f) if line.strip()]
    print(gpu_summary.summarize(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
