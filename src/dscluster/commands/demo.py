"""`dscluster demo`: the embedded default. Trains the built-in GPT on the stdlib corpus through the real
`deepspeed` launcher, supervised like any `dscluster launch` (run directory, teardown, restarts from
the last committed checkpoint), with a progress bar read from the trainer's metrics.jsonl.

Where: this machine (all local GPUs, else 2 CPU processes with gloo); `--nodes N` a simulated N-node
cluster on this machine (root; brought up when needed); `--cluster SPEC` a real cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from dscluster import fsutil
from dscluster.commands.argtypes import MAX_PROCS, count
from dscluster.commands.demowhere import Target, closing_hints, demo_target
from dscluster.console import FAIL, OK, next_steps
from dscluster.errors import ExitCode, UsageError
from dscluster.i18n import tr, tr_n
from dscluster.runs.records import metrics as run_metrics

DEMO_MICRO_BATCH = {"cpu": 16, "cuda": 32}
# Steps by default: on a 2-core CPU a step of the tiny preset takes about 0.6 s, and by step 60 the loss
# has fallen from about 6 to under 3 (benchmarks/demo_phases.py), so the CPU demo ends within a minute.
DEMO_STEPS = {"cpu": 60, "cuda": 200}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help=tr("train the built-in GPT on this machine with DeepSpeed (nothing to download)"),
        description=tr("Prepare the Python standard library as a corpus (cached), then train the tiny GPT "
                       "through the real deepspeed launcher on all local GPUs, or 2 CPU processes with gloo, "
                       "into a run directory with metrics and committed checkpoints."))
    p.add_argument("--steps", type=count(1), default=None, help=tr("training steps (default 200 on GPUs, 60 on CPU)"))
    p.add_argument("--preset", default="tiny", help=tr("model size (default tiny; see python -m dscluster.train --help)"))
    p.add_argument("--procs", type=count(1, MAX_PROCS), default=None,
                   help=tr("processes: default all local GPUs, else 2 CPU processes"))
    p.add_argument("--cpu", action="store_true", help=tr("train on CPU even when GPUs are present"))
    p.add_argument("--data", help=tr("a prepared data directory (default: the stdlib corpus)"))
    p.add_argument("--save-interval", type=count(0), default=100, help=tr("steps between checkpoints (default 100)"))
    p.add_argument("--keep", type=count(0), default=2, help=tr("committed checkpoints to keep (default 2)"))
    p.add_argument("--name", default="demo", help=tr("run name (default demo)"))
    from dscluster.commands.launch import add_launch_options  # noqa: PLC0415 - launch's options, one definition

    add_launch_options(p, demo=True)
    # --nodes N uses the simulated cluster plain `dscluster runs/status/logs/sim ...` address: "default".
    p.set_defaults(func=cmd_demo, sim_name=None)


def demo_ds_config(device_type: str, steps: int) -> dict:
    """No optimizer section: the trainer's default AdamW (the preset's learning rate, betas 0.9/0.95,
    weight decay 0.1) is torch's, fused on GPU, so the demo never waits for a JIT-compiled op."""
    gpu = device_type == "cuda"
    return {
        "train_micro_batch_size_per_gpu": DEMO_MICRO_BATCH[device_type],
        "gradient_accumulation_steps": 1,
        "scheduler": {"type": "WarmupCosineLR", "params": {"total_num_steps": steps, "warmup_num_steps": max(1, steps // 10),
                                                            "warmup_type": "linear", "cos_min_ratio": 0.1}},
        "gradient_clipping": 1.0,
        "bf16": {"enabled": gpu},
        "zero_optimization": {"stage": 1 if gpu else 0},
        "steps_per_print": 10**9,
    }


def trainer_args(*, steps: int, preset: str, data: Path, ds_config: Path, save_interval: int, keep: int) -> list[str]:
    """Pure: the trainer's arguments (its run dir comes from the launcher: $DSCLUSTER_RUN_DIR)."""
    log_interval = max(1, steps // 100)
    return ["--preset", preset, "--steps", str(steps), "--data", str(data), "--save-interval", str(save_interval),
            "--keep", str(keep), "--log-interval", str(log_interval), "--eval-interval", str(max(log_interval, steps // 3)),
            "--deepspeed", "--deepspeed_config", str(ds_config)]


class Progress:
    """Follows metrics.jsonl; draws one bar line on a terminal, or a line per ~10% otherwise."""

    def __init__(self, metrics: Path, steps: int, stream=sys.stdout):
        self.metrics, self.steps, self.stream = metrics, steps, stream
        self.offset, self.records, self.start = 0, [], time.time()
        self.tty = stream.isatty()
        self._last_tenth = -1

    def __call__(self) -> None:
        new, self.offset = run_metrics.read(self.metrics.parent, self.offset)
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
    gpus = 0 if args.cpu else visible_gpus()
    if gpus:
        procs = args.procs or gpus
        if procs > gpus:
            raise UsageError(tr("--procs {p} but only {g} GPUs are visible", p=procs, g=gpus),
                             tr("use --procs {g} or fewer", g=gpus))
        return "cuda", procs
    return "cpu", args.procs or 2


def visible_gpus(env: Mapping[str, str] | None = None) -> int:
    """The GPUs the ranks' torch would see, without importing torch here (seconds on a GPU host): none
    when the installed torch has no CUDA library, else `visible_count` of nvidia-smi's."""
    import importlib.util  # noqa: PLC0415

    from dscluster.doctor.local import local_gpu_count  # noqa: PLC0415

    spec = importlib.util.find_spec("torch")
    where = list(spec.submodule_search_locations or []) if spec else []
    if not any(Path(d, "lib", name).exists() for d in where for name in ("libtorch_cuda.so", "torch_cuda.dll")):
        return 0
    return visible_count((os.environ if env is None else env).get("CUDA_VISIBLE_DEVICES"), local_gpu_count())


def visible_count(cuda_visible_devices: str | None, present: int) -> int:
    """As CUDA reads CUDA_VISIBLE_DEVICES: its entries up to the first that is not a device (an index or
    a GPU-/MIG- UUID), never more than the GPUs present (nvidia-smi's count; 0: unknown)."""
    if cuda_visible_devices is None:
        return present
    n = 0
    for entry in cuda_visible_devices.split(","):
        entry = entry.strip()
        if not (entry.isdigit() or entry.startswith(("GPU-", "MIG-"))):
            break
        n += 1
    return min(n, present) if present else n


def _failure_lines(run_dir: Path) -> list[str]:
    logs = run_dir / "logs"
    lines = []
    for path in [logs / "launcher.log", *sorted(logs.glob("*_rank*.log"))]:
        try:
            lines += fsutil.read_bytes(path).decode("utf-8", "replace").splitlines()
        except OSError:
            continue
    errors = [ln for ln in lines if ln.lstrip().startswith(("error:", "fix:", tr("error") + ":", tr("fix") + ":"))]
    if errors:
        return list(dict.fromkeys(errors))  # each rank prints the same message: show it once
    return [ln for ln in lines if "WARNING" not in ln][-15:]


def cmd_demo(args: argparse.Namespace) -> int:
    """With --json, or --detach into a pipe (`run=$(dscluster demo --detach)`), stdout carries only the
    run record's summary or the run id; everything else goes to stderr."""
    quiet = not args.dry_run and (args.json or (args.attach is False and not sys.stdout.isatty()))
    if not quiet:
        return _demo(args)
    from dscluster.commands.runs import summary  # noqa: PLC0415
    from dscluster.resultout import result_stdout  # noqa: PLC0415

    run_dirs: list[Path] = []
    with result_stdout() as out:
        rc = _demo(args, run_dirs)
        if run_dirs:
            print(json.dumps(summary(run_dirs[0]), indent=2, default=str) if args.json else run_dirs[0].name,
                  file=out, flush=True)
    return rc


def _demo(args: argparse.Namespace, run_dirs: list[Path] | None = None) -> int:
    from dscluster.runs import service
    from dscluster.runs.preparing.prepare import dry_run_text, prepare  # noqa: PLC0415
    from dscluster.train.config import preset_config  # noqa: PLC0415

    if args.steps is not None and args.steps < 1:
        raise UsageError(tr("--steps must be at least 1"), tr("e.g. --steps 300"))
    started = time.time()
    preset_config(args.preset)  # unknown preset: stop before anything is prepared or launched
    target = demo_target(args)
    data_dir = _corpus(args, target.shared)
    opts, device_type, procs = _options(args, target, data_dir)
    if args.dry_run:
        print(dry_run_text(prepare(opts, dry_run=True)))
        return ExitCode.OK
    launched = service.start(opts)
    if run_dirs is not None:
        run_dirs.append(launched.run_dir)
    _announce(args, target, launched, device_type, procs)
    attach = args.attach if args.attach is not None else not args.json
    if not attach:
        flag, run_id = target.runs_flag, launched.run_id
        print(next_steps(f"dscluster logs {run_id} -f{flag}", f"dscluster status {run_id}{flag}",
                         f"dscluster stop {run_id}{flag}", *([f"dscluster sim crash{target.sim_flag} node1"]
                                                             if target.sim_name and target.nodes > 1 else [])))
        return ExitCode.OK
    return _follow(args, target, launched.run_id, launched.run_dir, started)


def _corpus(args: argparse.Namespace, shared: Path) -> Path:
    """The corpus the demo trains on: --data, else the standard library's sources prepared (once) under the
    shared directory. A dry run prepares no corpus (22 MB, perhaps on a shared directory not mounted here):
    it names the path a real run would use."""
    from dscluster.data.corpus import default_corpus_dir, ensure_stdlib_corpus  # noqa: PLC0415
    from dscluster.data.shards import open_dataset  # noqa: PLC0415

    if args.data:
        data_dir = Path(args.data).absolute()
        note = ""
    elif args.dry_run:
        return default_corpus_dir(shared)
    else:
        print(tr("preparing the corpus: the Python standard library sources (cached after the first time)..."), flush=True)
        data_dir, fresh = ensure_stdlib_corpus(shared)
        note = tr(" (prepared now)") if fresh else tr(" (cached)")
    if not args.dry_run:
        data = open_dataset(data_dir)
        print(f"{OK} " + tr("corpus {path}{note}: {train:,} training tokens, {val:,} validation tokens",
                             path=data_dir, note=note, train=data.train.tokens, val=data.val.tokens))
    return data_dir


def _options(args: argparse.Namespace, target: Target, data_dir: Path):
    """(the run's RunRequest, device type, processes on this machine): the reference trainer with the
    device's ds_config and step count, its threads sized to the cores the processes share."""
    from dscluster.commands.launch import request_from_args  # noqa: PLC0415
    from dscluster.commands.runnerargs import flags_from_args  # noqa: PLC0415
    from dscluster.runs import service  # noqa: PLC0415

    cluster, shared = target.cluster, target.shared
    device_type, procs = _detect(args)
    args.steps = args.steps or DEMO_STEPS[device_type]
    flags = flags_from_args(args)
    if cluster is None and args.procs is None and (flags.num_gpus is not None or flags.include is not None):
        from dscluster.launcher.runnerflags import select_local  # noqa: PLC0415

        procs = select_local(None, flags)[0]  # `--num_gpus N` / `--include localhost:0,1` choose the processes
    ds_config = demo_ds_config(device_type, args.steps)
    cfg_path = service.inline_ds_config(shared, ds_config, "demo", write=not args.dry_run)
    env = list(args.env)
    sharing = procs if cluster is None else target.nodes  # processes sharing this machine's cores
    if device_type == "cpu" and sharing and not any(e.startswith("OMP_NUM_THREADS=") for e in env):
        # One BLAS thread pool per process, sized so the processes do not fight over the cores.
        env.append(f"OMP_NUM_THREADS={max(1, (os.cpu_count() or 1) // sharing)}")
    command = ["dscluster.train", *trainer_args(steps=args.steps, preset=args.preset, data=data_dir, ds_config=cfg_path,
                                                save_interval=args.save_interval, keep=args.keep)]
    opts = request_from_args(args, command, True, cluster=cluster, hostfile=None, local=None if cluster else procs,
                             env=env, cwd=str(shared) if cluster else None,
                             unwritten_configs={str(cfg_path): ds_config} if args.dry_run else None)
    return opts, device_type, procs


def _announce(args: argparse.Namespace, target: Target, launched, device_type: str, procs) -> None:
    """The started run in one line (what, where, world size) and its directory."""
    prep = launched.prepared
    if target.cluster:
        where = tr_n(len(prep.record.launch.hosts), "{n} node of {cluster}", "{n} nodes of {cluster}",
                     cluster=prep.record.cluster)
    else:
        where = (tr_n(procs, "{n} GPU", "{n} GPUs") if device_type == "cuda"
                 else tr_n(procs, "{n} CPU process (gloo)", "{n} CPU processes (gloo)"))
    print(f"{OK} " + tr("run {id}: {preset} GPT, {steps} steps on {where}", id=launched.run_id, preset=args.preset,
                         steps=args.steps, where=where) + " " + tr("(world size {n})", n=prep.record.world_size))
    from dscluster.commands.runview import queued_note  # noqa: PLC0415

    print("  " + tr("run directory: {dir}", dir=launched.run_dir) + queued_note(prep.record.status))


def _follow(args: argparse.Namespace, target: Target, run_id: str, run_dir: Path, started: float) -> int:
    """Attached: the progress bar until the run ends, then its failure (with where to look) or its summary."""
    from dscluster.commands.runview import exit_code_of, print_outcome, wait_attached  # noqa: PLC0415
    from dscluster.train.commits import latest_committed  # noqa: PLC0415

    progress = Progress(run_dir / "metrics.jsonl", args.steps)
    record = wait_attached(run_dir, on_tick=progress)
    progress.finish()
    if record.status != "succeeded":
        print_outcome(record)
        print(f"{FAIL} " + tr("training failed (exit code {rc}); launcher log: {log}", rc=record.exit_code,
                              log=run_dir / "logs" / "launcher.log"), file=sys.stderr)
        for line in _failure_lines(run_dir):
            print("  " + line, file=sys.stderr)
        print(next_steps(f"dscluster status {run_id}{target.runs_flag}", f"dscluster logs {run_id}{target.runs_flag}",
                         *([f"dscluster sim down{target.sim_flag}"] if target.sim_name else [])))
        return exit_code_of(record)
    return _summary(run_dir, progress.records, latest_committed(run_dir / "checkpoints"), time.time() - started,
                    closing_hints(target, run_id))


def _summary(run_dir: Path, records: list[dict], last_step: int | None, wall: float, hints: list[str]) -> int:
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
    print(next_steps(f"tensorboard --logdir {run_dir / 'tensorboard'}", *hints))
    return ExitCode.OK
