"""The training pause per checkpoint, synchronous vs asynchronous, next to the disk's own write speed.

One process (gloo, or NCCL on a GPU), the reference GPT at a preset (default 124m) under DeepSpeed with
AdamW, one training step so the optimizer state exists; then in the same directory and the same run:
  dd       `dd if=/dev/zero bs=64M conv=fsync` of the checkpoint's size: the disk's write speed
  sync     dscluster.train.checkpoint.save(mode="sync"): the pause is the whole save + fsync + commit
  async    save(mode="async"): the pause is the snapshot to host memory; the background write, fsync
           and commit are timed until wait_pending() returns, and a training step is timed while it runs
  verify   every file against COMMIT.json (sizes + content hashes) and loaded on CPU
  export   the step as fp32, safetensors and hf through DeepSpeed's zero_to_fp32, each format timed
  universal the step converted to DeepSpeed's universal checkpoint format (ds_to_universal, what a resume
           on another world size does once per step), then loaded back through it (`--skip-universal`
           leaves it out)
Prints one JSON line per measurement, then a summary with async/sync and write-speed/dd ratios.

    python benchmarks/checkpoint_pause.py --preset 124m --dir /path/on/the/disk/to/measure
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def emit(rec: dict) -> dict:
    print(json.dumps(rec), flush=True)
    return rec


def dd_speed(directory: Path, nbytes: int) -> dict:
    count = max(1, -(-nbytes // (64 << 20)))
    path = directory / "dd.bin"
    t0 = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", "bs=64M", f"count={count}", "conv=fsync"], check=True,
                   capture_output=True)
    seconds = time.perf_counter() - t0
    path.unlink()
    return {"bench": "dd", "bytes": count << 26, "seconds": round(seconds, 3),
            "gb_per_s": round((count << 26) / seconds / 1e9, 3),
            "command": f"dd if=/dev/zero of={path} bs=64M count={count} conv=fsync"}


def universal_round_trip(engine, ck, step_dir: Path, zero_stage: int) -> dict:
    """ds_to_universal on the committed step (dscluster.train.checkpoint.to_universal, as the trainer does
    when the world size changes), then engine.load_checkpoint through it (load_universal), both timed."""
    from dscluster.train.checkpoint import UNIVERSAL_DIR

    shutil.rmtree(step_dir / UNIVERSAL_DIR, ignore_errors=True)
    before = step_dir_bytes(step_dir)
    t0 = time.perf_counter()
    out = ck.to_universal(step_dir)
    convert = time.perf_counter() - t0
    size = step_dir_bytes(out)
    config = engine._config
    saved = config.load_universal_checkpoint
    config.load_universal_checkpoint = True
    t0 = time.perf_counter()
    try:
        path, _ = engine.load_checkpoint(str(step_dir), tag=UNIVERSAL_DIR, load_optimizer_states=True)
    finally:
        config.load_universal_checkpoint = saved
    load = time.perf_counter() - t0
    # The converter runs in a fresh interpreter (see to_universal): how much of the time is its start.
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import deepspeed.checkpoint.ds_to_universal"], check=True,
                   capture_output=True)
    start = time.perf_counter() - t0
    return {"bench": "universal", "zero_stage": zero_stage, "checkpoint_bytes": before, "universal_bytes": size,
            "convert_s": round(convert, 3), "of_which_interpreter_start_s": round(start, 3), "load_s": round(load, 3),
            "loaded": path is not None, "convert_gb_per_s": round(before / max(convert, 1e-9) / 1e9, 3)}


def remove(path: Path) -> None:
    """An export of an earlier run of this script (a file for fp32, a directory for the others)."""
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def step_dir_bytes(step_dir: Path) -> int:
    return sum(p.stat().st_size for p in step_dir.rglob("*") if p.is_file())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="124m")
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--zero-stage", type=int, default=1)
    ap.add_argument("--dir", help="where dd and the checkpoints write (default: a temporary directory)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--skip-universal", action="store_true", help="do not time the universal conversion")
    ap.add_argument("--local_rank", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                       ("MASTER_PORT", str(29700 + os.getpid() % 200))):
        os.environ.setdefault(key, value)

    import deepspeed
    import torch
    import torch.distributed as dist

    from dscluster.train import checkpoint as ck
    from dscluster.train.export import export
    from dscluster.train.model import GPT, preset_config

    cuda = torch.cuda.is_available()
    deepspeed.init_distributed(dist_backend="nccl" if cuda else "gloo")
    cfg = preset_config(args.preset, seq_len=args.seq_len, vocab_size=257)
    model = GPT(cfg)
    ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": True}},
          "zero_optimization": {"stage": args.zero_stage}, "steps_per_print": 10**9}
    if cuda:
        ds["bf16"] = {"enabled": True}
    engine, *_ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=ds)
    device = engine.device

    def train_step() -> float:
        t0 = time.perf_counter()
        batch = torch.randint(0, 257, (1, cfg.seq_len + 1), device=device)
        loss = engine(batch[:, :-1], batch[:, 1:])
        engine.backward(loss)
        engine.step()
        if cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - t0

    train_step()
    quiet_step = min(train_step() for _ in range(2))
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="ckpt-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    save_dir = base / "checkpoints"
    shutil.rmtree(save_dir, ignore_errors=True)
    common = dict(rank=0, world_size=1, zero_stage=args.zero_stage, keep=1, client_state={"model": cfg.__dict__},
                  barrier=dist.barrier)
    device_name = torch.cuda.get_device_name() if cuda else f"CPU ({os.cpu_count()} cores)"
    emit({"bench": "setup", "preset": args.preset, "params": sum(p.numel() for p in model.parameters()),
          "device": device_name, "zero_stage": args.zero_stage, "dir": str(base), "train_step_s": round(quiet_step, 3)})

    step, results = 0, {"sync": [], "async": [], "dd": []}
    for _ in range(args.repeats):
        step += 1
        t0 = time.perf_counter()
        ck.save(engine, save_dir, step, mode="sync", **common)
        pause = time.perf_counter() - t0
        size = step_dir_bytes(save_dir / ck.tag_for(step))
        results["sync"].append(emit({"bench": "sync", "step": step, "bytes": size, "pause_s": round(pause, 3),
                                     "gb_per_s": round(size / pause / 1e9, 3)}))
        results["dd"].append(emit(dd_speed(base, size)))

        step += 1
        t0 = time.perf_counter()
        ck.save(engine, save_dir, step, mode="async", **common)
        pause = time.perf_counter() - t0
        during = train_step() if ck.pending_step() == step else None
        ck.wait_pending()
        total = time.perf_counter() - t0
        size = step_dir_bytes(save_dir / ck.tag_for(step))
        assert ck.latest_committed(save_dir) == step, "the async save was not committed"
        results["async"].append(emit({"bench": "async", "step": step, "bytes": size, "pause_s": round(pause, 3),
                                      "until_committed_s": round(total, 3),
                                      "background_gb_per_s": round(size / max(total - pause, 1e-9) / 1e9, 3),
                                      "train_step_during_write_s": round(during, 3) if during else None}))

    step_dir = save_dir / ck.tag_for(step)
    t0 = time.perf_counter()
    problems = ck.verify(step_dir) + ck.load_problems(step_dir)
    emit({"bench": "verify", "bytes": step_dir_bytes(step_dir), "seconds": round(time.perf_counter() - t0, 3),
          "problems": problems})
    exports = {}
    for fmt in ("fp32", "safetensors", "hf"):
        out = base / f"export.{fmt}"
        remove(out)
        done = export(step_dir, out, fmt)
        exports[fmt] = emit({"bench": "export", "format": fmt, "bytes": done.bytes, "seconds": round(done.seconds, 3),
                             "gb_per_s": round(done.bytes / max(done.seconds, 1e-9) / 1e9, 3)})
        remove(out)
    universal = None
    if not args.skip_universal:
        universal = emit(universal_round_trip(engine, ck, step_dir, args.zero_stage))

    sync_pause = min(r["pause_s"] for r in results["sync"])
    async_pause = min(r["pause_s"] for r in results["async"])
    dd = max(r["gb_per_s"] for r in results["dd"])
    summary = {"bench": "summary", "preset": args.preset, "device": device_name,
               "checkpoint_gb": round(results["sync"][-1]["bytes"] / 1e9, 3),
               "sync_pause_s": sync_pause, "async_pause_s": async_pause,
               "async_over_sync": round(async_pause / sync_pause, 3),
               "dd_gb_per_s": dd, "sync_write_over_dd": round(max(r["gb_per_s"] for r in results["sync"]) / dd, 3),
               "async_background_over_dd": round(max(r["background_gb_per_s"] for r in results["async"]) / dd, 3),
               **{f"export_{fmt}_s": r["seconds"] for fmt, r in exports.items()},
               **({"universal_convert_s": universal["convert_s"], "universal_load_s": universal["load_s"]}
                  if universal else {})}
    emit(summary)
    if not args.dir:
        shutil.rmtree(base, ignore_errors=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
