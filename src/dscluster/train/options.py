"""Trainer command line: the options the launcher, the demo and the benchmarks pass to every rank.

`parse(argv)` returns the argparse namespace; `model_config(args, vocab)` and the checks in
`check_paths(args)` turn it into validated settings before any process group or GPU is touched.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

from dscluster.errors import ConfigError, PermissionNeeded
from dscluster.i18n import tr
from dscluster.train.config import PRESETS, GPTConfig, preset_config

_FAULT_RE = re.compile(r"^crash-in-save@(\d+)$")


@dataclass(frozen=True)
class Fault:
    crash_in_save_step: int | None = None


class _RefusingParser(argparse.ArgumentParser):
    """For checking a launch's arguments before anything starts: an error is raised, never an exit."""

    def error(self, message: str):
        raise ConfigError(tr("the trainer's arguments: {message}", message=message),
                          tr("see python -m dscluster.train --help"), setting="args")


def check_args(argv: list[str]) -> None:
    """What the trainer would refuse at its start, found before a launch: unknown or malformed options,
    out-of-range numbers, an unknown preset or an inconsistent model size. (Data and checkpoints are
    checked by the ranks themselves, where those paths are.)"""
    if "-h" in argv or "--help" in argv:
        return  # the ranks print the help; nothing to refuse
    args = build_parser(_RefusingParser).parse_args(argv)
    check_numbers(args)
    model_config(args, vocab_size=257)


def build_parser(cls: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    p = cls(prog="python -m dscluster.train",
                                description="dscluster reference GPT trainer (runs inside every DeepSpeed rank).")
    m = p.add_argument_group("model")
    m.add_argument("--preset", default="tiny", help=f"model size: {', '.join(PRESETS)} (default tiny)")
    m.add_argument("--n-layer", type=int, help="explicit size: layers (overrides the preset)")
    m.add_argument("--n-head", type=int, help="explicit size: attention heads")
    m.add_argument("--d-model", type=int, help="explicit size: hidden size")
    m.add_argument("--seq-len", type=int, help="tokens per training window (default: the preset's)")
    d = p.add_argument_group("data")
    d.add_argument("--data", help="prepared data directory (default: the stdlib corpus, prepared and cached)")
    d.add_argument("--seed", type=int, default=1234, help="seed for init, data order and the sample")
    t = p.add_argument_group("training")
    t.add_argument("--steps", type=int, default=200, help="optimizer steps to train in total (default 200)")
    t.add_argument("--lr", type=float, help="peak learning rate (overrides the config's optimizer/scheduler lr)")
    t.add_argument("--log-interval", type=int, default=10, help="steps between metrics lines (default 10)")
    t.add_argument("--eval-interval", type=int, default=100, help="steps between val-loss evaluations; 0: only at the end")
    t.add_argument("--eval-batches", type=int, default=8, help="validation micro-batches per rank (default 8)")
    t.add_argument("--sample-tokens", type=int, default=200, help="tokens to generate at the end (0: none)")
    t.add_argument("--sample-prompt", default="def ", help="prompt of the final sample")
    r = p.add_argument_group("run directory and checkpoints")
    r.add_argument("--run-dir", help="where metrics.jsonl goes (default $DSCLUSTER_RUN_DIR, else ./run)")
    r.add_argument("--save-dir", help="checkpoint directory (default <run-dir>/checkpoints)")
    r.add_argument("--save-interval", type=int, default=0, help="steps between checkpoints; the last step is always saved")
    r.add_argument("--keep", type=int, default=3, help="committed checkpoints to keep (0: all; default 3)")
    r.add_argument("--resume", default="auto", help="auto (newest committed), never, or step-N (default auto)")
    r.add_argument("--checkpoint-mode", default="auto", choices=("auto", "sync", "async"),
                   help="async: training continues once the state is in host memory, files are written and "
                        "committed in the background (falls back to sync when host memory is short); "
                        "auto: async on GPU, sync on CPU")
    x = p.add_argument_group("test knobs")
    x.add_argument("--fault", help="inject a failure: crash-in-save@STEP")
    x.add_argument("--step-sleep", type=float, default=0.0, help="sleep this many seconds after each step")
    g = p.add_argument_group("speed (GPU)")
    g.add_argument("--compile", default="auto", choices=("auto", "off", "blocks", "model"),
                   help="torch.compile: auto = each block on CUDA (off on CPU and under ZeRO-3); model = one graph")
    g.add_argument("--attention", default="auto", choices=("auto", "cudnn", "flash", "efficient", "math", "fa4"),
                   help="attention kernels: fa4 = FlashAttention-4 (the fa4 extra; Hopper or newer); cudnn, flash, "
                        "efficient, math = that SDPA kernel family; auto = fa4 where it is installed and runs, else "
                        "PyTorch's SDPA choice (cuDNN then FlashAttention on H100/H200)")
    g.add_argument("--kernels", default="auto", choices=("auto", "off", "triton", "swiglu", "norm", "quack"),
                   help="the hand-written Triton kernels on CUDA (train/kernels.py): triton = SwiGLU and rotary, "
                        "norm = those and the fused residual add + RMSNorm (train/norm_kernels.py), "
                        "swiglu = SwiGLU only, quack = rotary and the MLP with SwiGLU inside its matrix products "
                        "(QuACK's GEMMs, train/mlp_kernels.py; the fa4 extra, Hopper or newer, not with fp8 or ZeRO-3); "
                        "auto = quack where it runs on a model of 50M+ parameters, measured fastest at 1.3B on H200s "
                        "(benchmarks/RESULTS.md), else triton; "
                        "off: PyTorch's expressions, compiled by Inductor")
    g.add_argument("--precision", default="auto", choices=("auto", "fp8"),
                   help="auto: bf16 on GPUs that support it, fp32 on CPU; fp8: the linear layers' matrix products in "
                        "float8 (torchao, the fp8 extra; Hopper/Ada GPUs), the rest bf16")
    g.add_argument("--activation-checkpointing", action="store_true",
                   help="recompute each block in backward: far less activation memory, about 1/3 more compute")
    g.add_argument("--micro-batch-search", action="store_true",
                   help="GPU: train with the largest micro-batch that fits (replaces train_micro_batch_size_per_gpu)")
    # A string default goes through type=int too: LOCAL_RANK=xyz is a usage error naming the flag.
    p.add_argument("--local_rank", "--local-rank", type=int, default=os.environ.get("LOCAL_RANK", "0"))
    p.add_argument("--deepspeed", action="store_true", help="(DeepSpeed convention) use DeepSpeed: always on")
    p.add_argument("--deepspeed_config", "--deepspeed-config", help="ds_config.json (default: built from the options)")
    return p


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    args.run_dir = Path(args.run_dir or os.environ.get("DSCLUSTER_RUN_DIR") or "run").absolute()
    args.save_dir = Path(args.save_dir).absolute() if args.save_dir else args.run_dir / "checkpoints"
    return args


def check_numbers(args: argparse.Namespace) -> Fault:
    for name in ("steps", "log_interval", "eval_batches"):
        if getattr(args, name) <= 0:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(tr("{flag} must be positive, got {v}", flag=flag, v=getattr(args, name)),
                              tr("pass {flag} N with N >= 1", flag=flag), setting=flag)
    for name in ("eval_interval", "save_interval", "keep", "sample_tokens"):
        if getattr(args, name) < 0:
            flag = "--" + name.replace("_", "-")
            raise ConfigError(tr("{flag} must be >= 0, got {v}", flag=flag, v=getattr(args, name)),
                              tr("pass {flag} 0 or more", flag=flag), setting=flag)
    if args.lr is not None and not 0 < args.lr < float("inf"):
        raise ConfigError(tr("--lr must be positive, got {v}", v=args.lr), tr("e.g. --lr 3e-4"), setting="--lr")
    if not 0 <= args.step_sleep < float("inf"):
        raise ConfigError(tr("{flag} must be >= 0, got {v}", flag="--step-sleep", v=args.step_sleep),
                          tr("pass {flag} 0 or more", flag="--step-sleep"), setting="--step-sleep")
    if not args.fault:
        return Fault()
    m = _FAULT_RE.match(args.fault)
    if not m:
        raise ConfigError(tr("--fault {v!r} is not a known fault", v=args.fault), tr("use --fault crash-in-save@STEP"),
                          setting="--fault")
    return Fault(crash_in_save_step=int(m.group(1)))


def model_config(args: argparse.Namespace, vocab_size: int) -> GPTConfig:
    """The preset, with any explicit --n-layer/--n-head/--d-model/--seq-len replacing its values."""
    return preset_config(args.preset, n_layer=args.n_layer, n_head=args.n_head, d_model=args.d_model,
                         seq_len=args.seq_len, vocab_size=vocab_size)


def check_run_dir(run_dir: Path) -> None:
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        if not os.access(run_dir, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise PermissionNeeded(tr("run directory {path} is not writable ({err})", path=run_dir, err=exc.strerror or exc),
                        tr("pass a writable --run-dir (or set DSCLUSTER_RUN_DIR)"), setting="--run-dir") from exc
