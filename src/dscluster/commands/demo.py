"""`dscluster demo`: the embedded default. Trains the built-in GPT on the stdlib corpus, on this machine,
through the real `deepspeed` launcher (all local GPUs, else 2 CPU processes with gloo), into a run
directory like any other run, with a progress bar read from the trainer's metrics.jsonl.

The launching itself is `launch_local()` (argv + env in, exit code out), the one piece the
supervisor will replace.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from dscluster import fsutil
from dscluster.console import FAIL, OK, next_steps
from dscluster.errors import ExitCode, UsageError
from dscluster.i18n import tr
from dscluster.paths import local_shared, runs_dir

DEMO_MICRO_BATCH = {"cpu": 16, "cuda": 32}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="train the built-in GPT on this machine with DeepSpeed (nothing to download)",
        description="Prepare the Python standard library as a corpus (cached), then train the tiny GPT "
                    "through the real deepspeed launcher on all local GPUs, or 2 CPU processes with gloo, "
                    "into a run directory with metrics and committed checkpoints.")
    p.add_argument("--steps", type=int, default=200, help="training steps (default 200)")
    p.add_argument("--preset", default="tiny", help="model size (default tiny; see python -m dscluster.train --help)")
    p.add_argument("--procs", type=int, default=None,
                   help="processes: default all local GPUs, else 2 CPU processes")
    p.add_argument("--cpu", action="store_true", help="train on CPU even when GPUs are present")
    p.add_argument("--data", help="a prepared data directory (default: the stdlib corpus)")
    p.add_argument("--save-interval", type=int, default=100, help="steps between checkpoints (default 100)")
    p.add_argument("--keep", type=int, default=2, help="committed checkpoints to keep (default 2)")
    p.add_argument("--name", default="demo", help="run name (default demo)")
    p.set_defaults(func=cmd_demo)


def demo_ds_config(device_type: str, steps: int) -> dict:
    gpu = device_type == "cuda"
    return {
        "train_micro_batch_size_per_gpu": DEMO_MICRO_BATCH[device_type],
        "gradient_accumulation_steps": 1,
        "optimizer": {"type": "AdamW", "params": {"lr": 2e-3, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}},
        "scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": steps, "warmup_num_steps": max(1, steps // 10),
                                                            "warmup_type": "linear", "cos_min_ratio": 0.1}},
        "gradient_clipping": 1.0,
        "bf16": {"enabled": gpu},
        "zero_optimization": {"stage": 1 if gpu else 0},
        "steps_per_print": 10**9,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_command(*, procs: int, device_type: str, port: int, data: Path, run_dir: Path, ds_config: Path,
                  steps: int, preset: str, save_interval: int, keep: int) -> tuple[list[str], dict[str, str]]:
    """Pure: the deepspeed launcher argv and the environment for a local run."""
    log_interval = max(1, steps // 100)
    argv = [sys.executable, "-m", "deepspeed.launcher.runner", "--num_gpus", str(procs), "--master_port", str(port),
            "--module", "dscluster.train",
            "--preset", preset, "--steps", str(steps), "--data", str(data), "--run-dir", str(run_dir),
            "--save-interval", str(save_interval), "--keep", str(keep), "--log-interval", str(log_interval),
            "--eval-interval", str(max(log_interval, steps // 3)),
            "--deepspeed", "--deepspeed_config", str(ds_config)]
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    if device_type == "cpu":
        # One BLAS thread pool per process, sized so the processes do not fight over the cores.
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // procs))
    return argv, env


def launch_local(argv: list[str], env: dict[str, str], log_path: Path, on_tick=None, tick_s: float = 0.5) -> int:
    """Run the launcher in its own process group, output to `log_path`; returns its exit code.

    `on_tick()` is called while it runs (progress). Ctrl-C stops the whole group we started.
    """
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            while proc.poll() is None:
                if on_tick:
                    on_tick()
                time.sleep(tick_s)
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            raise
    if on_tick:
        on_tick()
    return proc.returncode


class Progress:
    """Follows metrics.jsonl; draws one bar line on a terminal, or a line per ~10% otherwise."""

    def __init__(self, metrics: Path, steps: int, stream=sys.stdout):
        self.metrics, self.steps, self.stream = metrics, steps, stream
        self.offset, self.records, self.start = 0, [], time.time()
        self.tty = stream.isatty()
        self._last_tenth = -1

    def __call__(self) -> None:
        new, self.offset = fsutil.read_jsonl(self.metrics, self.offset)
        self.records += new
        train = [r for r in self.records if "loss" in r and "event" not in r]
        if not train:
            if self.tty:
                self.stream.write(f"\r  {tr('starting the processes...')} {time.time() - self.start:.0f}s ")
                self.stream.flush()
            return
        last = train[-1]
        frac = min(1.0, last["step"] / self.steps)
        text = tr("step {s}/{n}  loss {loss:.3f}  {tps:,.0f} tok/s", s=last["step"], n=self.steps, loss=last["loss"],
                  tps=last.get("tokens_per_s", 0))
        if self.tty:
            full, empty = ("█", "·") if _encodable("█·", self.stream) else ("#", ".")
            bar = full * int(frac * 30) + empty * (30 - int(frac * 30))
            self.stream.write(f"\r  {bar} {text}   ")
            self.stream.flush()
        elif int(frac * 10) > self._last_tenth:
            self._last_tenth = int(frac * 10)
            print(f"  {text}", file=self.stream, flush=True)

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _encodable(text: str, stream) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _detect(args) -> tuple[str, int]:
    import torch  # noqa: PLC0415 - only the demo needs it here

    gpus = 0 if args.cpu else torch.cuda.device_count()
    if gpus:
        procs = args.procs or gpus
        if procs > gpus:
            raise UsageError(tr("--procs {p} but only {g} GPUs are visible", p=procs, g=gpus),
                             tr("use --procs {g} or fewer", g=gpus))
        return "cuda", procs
    return "cpu", args.procs or 2


def _new_run(shared: Path, name: str, argv: list[str], ds_config: dict, world: int) -> tuple[str, Path]:
    import secrets  # noqa: PLC0415

    run_id = f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    run_dir = runs_dir(shared) / run_id
    (run_dir / "logs").mkdir(parents=True)
    record = {"id": run_id, "name": name, "argv": argv, "script": "dscluster.train", "cluster": "local",
              "hostfile": None, "world_size": world, "ds_config": ds_config, "env": {}, "git_commit": None,
              "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "status": "running",
              "attempts": [{"n": 1, "started": time.time(), "ended": None, "exit_code": None, "reason": None}],
              "exit_code": None, "last_checkpoint_step": None, "explanation": None,
              "supervisor_pid": os.getpid(), "supervisor_host": socket.gethostname()}
    fsutil.atomic_write_json(run_dir / "run.json", record)
    return run_id, run_dir


def _finish_run(run_dir: Path, rc: int, last_step: int | None) -> None:
    record = json.loads((run_dir / "run.json").read_text())
    record["status"] = "succeeded" if rc == 0 else "failed"
    record["exit_code"] = rc
    record["attempts"][-1].update(ended=time.time(), exit_code=rc, reason=None if rc == 0 else "exit code")
    record["last_checkpoint_step"] = last_step
    fsutil.atomic_write_json(run_dir / "run.json", record)
    fsutil.append_jsonl(run_dir / "events.jsonl", {"time": time.time(), "event": "finished", "exit_code": rc})


def _failure_lines(log_path: Path) -> list[str]:
    lines = log_path.read_text(errors="replace").splitlines()
    errors = [ln for ln in lines if ln.lstrip().startswith(("error:", "fix:", tr("error") + ":", tr("fix") + ":"))]
    if errors:
        return list(dict.fromkeys(errors))  # each rank prints the same message: show it once
    return [ln for ln in lines if "WARNING" not in ln][-15:]


def cmd_demo(args: argparse.Namespace) -> int:
    from dscluster import dsconfig  # noqa: PLC0415
    from dscluster.data.corpus import ensure_stdlib_corpus  # noqa: PLC0415
    from dscluster.data.shards import open_dataset  # noqa: PLC0415
    from dscluster.train.checkpoint import latest_committed  # noqa: PLC0415
    from dscluster.train.model import preset_config  # noqa: PLC0415

    if args.steps < 1:
        raise UsageError(tr("--steps must be at least 1"), tr("e.g. --steps 300"))
    started = time.time()
    preset_config(args.preset)  # unknown preset: stop before anything is prepared or launched
    shared = local_shared()
    if args.data:
        data_dir = Path(args.data).absolute()
        note = ""
    else:
        print(tr("preparing the corpus: the Python standard library sources (cached after the first time)..."), flush=True)
        data_dir, fresh = ensure_stdlib_corpus(shared)
        note = tr(" (prepared now)") if fresh else tr(" (cached)")
    data = open_dataset(data_dir)
    print(f"{OK} " + tr("corpus {path}{note}: {train:,} training tokens, {val:,} validation tokens", path=data_dir,
                         note=note, train=data.train.tokens, val=data.val.tokens))

    device_type, procs = _detect(args)
    config = demo_ds_config(device_type, args.steps)
    resolved = dsconfig.validate(config, procs)
    run_id, run_dir = _new_run(shared, args.name, sys.argv, resolved, procs)
    cfg_path = run_dir / "ds_config.json"
    fsutil.atomic_write_json(cfg_path, config)
    argv, env = build_command(procs=procs, device_type=device_type, port=free_port(), data=data_dir, run_dir=run_dir,
                              ds_config=cfg_path, steps=args.steps, preset=args.preset,
                              save_interval=args.save_interval, keep=args.keep)
    where = tr("{n} GPUs", n=procs) if device_type == "cuda" else tr("{n} CPU processes (gloo)", n=procs)
    print(f"{OK} " + tr("run {id}: {preset} GPT, {steps} steps on {where}", id=run_id, preset=args.preset,
                         steps=args.steps, where=where))
    print("  " + tr("run directory: {dir}", dir=run_dir))
    fsutil.append_jsonl(run_dir / "events.jsonl", {"time": time.time(), "event": "launched", "argv": argv})
    log_path = run_dir / "logs" / "launcher.log"
    progress = Progress(run_dir / "metrics.jsonl", args.steps)
    try:
        rc = launch_local(argv, env, log_path, on_tick=progress)
    except KeyboardInterrupt:
        progress.finish()
        _finish_run(run_dir, ExitCode.INTERRUPTED, latest_committed(run_dir / "checkpoints"))
        raise
    progress.finish()
    last_step = latest_committed(run_dir / "checkpoints")
    _finish_run(run_dir, rc, last_step)
    if rc != 0:
        print(f"{FAIL} " + tr("training failed (exit code {rc}); launcher log: {log}", rc=rc, log=log_path), file=sys.stderr)
        for line in _failure_lines(log_path):
            print("  " + line, file=sys.stderr)
        return ExitCode.FAILURE
    return _summary(run_dir, progress.records, last_step, time.time() - started)


def _summary(run_dir: Path, records: list[dict], last_step: int | None, wall: float) -> int:
    train = [r for r in records if "loss" in r and "event" not in r and r.get("loss") is not None]
    vals = [r["val_loss"] for r in records if r.get("val_loss") is not None and "event" not in r]
    done = next((r for r in records if r.get("event") == "done"), {})
    tps = [r["tokens_per_s"] for r in train[1:]] or [r["tokens_per_s"] for r in train]
    print(f"{OK} " + tr("trained in {s:.0f} s", s=wall))
    if train:
        print("  " + tr("loss: {first:.3f} (step {a}) -> {last:.3f} (step {b})", first=train[0]["loss"], a=train[0]["step"],
                        last=train[-1]["loss"], b=train[-1]["step"]))
    if vals:
        print("  " + tr("validation loss: {v:.3f}", v=vals[-1]))
    if tps:
        print("  " + tr("throughput: {t:,.0f} tokens/s", t=sum(tps) / len(tps)))
    if last_step is not None:
        print("  " + tr("checkpoint: {path} (committed)", path=run_dir / "checkpoints" / f"step-{last_step}"))
    if done.get("sample"):
        print("  " + tr("sample:"))
        for line in done["sample"].splitlines()[:12]:
            print("    " + line)
    print(next_steps(f"tensorboard --logdir {run_dir / 'tensorboard'}",
                     f"dscluster runs",
                     f"python -m dscluster.train --help",
                     "dscluster sim up 2   # rehearse a multi-node run on this machine"))
    return ExitCode.OK
