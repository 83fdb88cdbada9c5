"""Where a newcomer's demo spends its seconds: set-up, start-up, corpus preparation, launch, each rank's
imports and DeepSpeed set-up (with any JIT op build), the first step, training, and the end (validation,
sample, checkpoint, teardown).

    .venv/bin/python benchmarks/demo_phases.py                    # `dscluster demo` as the README runs it
    .venv/bin/python benchmarks/demo_phases.py --fresh            # + a fresh home: the corpus prepared, no JIT cache
    .venv/bin/python benchmarks/demo_phases.py --setup -- --nodes 3   # + scripts/setup.sh demo first; demo args after --

The demo runs as a user runs it (the venv's `dscluster demo`, its own output read line by line as it comes);
the phases come from that output's arrival times, the run's events.jsonl (launched / finished), rank 0's
log (DeepSpeed's time-stamped import line) and metrics.jsonl (each step's time). `--fresh` points
DSCLUSTER_HOME, DSCLUSTER_SHARED, TORCH_EXTENSIONS_DIR and XDG_CACHE_HOME (the ranks' bytecode cache, see
launcher/locallaunch.py) at an empty directory, as on a new machine
(pip's cache stays: that is set-up's part). Prints one line per phase and a JSON summary; a benchmark,
not a test: it asserts nothing but the demo's success and a loss that fell.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The checkout's venv (what scripts/setup.sh makes), else this interpreter's.
VENV_BIN = ROOT / ".venv" / "bin" if (ROOT / ".venv" / "bin" / "python").exists() else Path(sys.executable).parent
DS_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


def rank0_first_stamp(run_dir: Path) -> float | None:
    """The time of rank 0's first DeepSpeed log line (printed when `import deepspeed` is done)."""
    logs = sorted((run_dir / "logs").glob("*_rank0.log"))
    if not logs:
        return None
    for line in logs[0].read_text(errors="replace").splitlines():
        m = DS_STAMP.match(line)
        if m:
            return dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup", action="store_true", help="time scripts/setup.sh demo first")
    ap.add_argument("--fresh", action="store_true", help="a new DSCLUSTER_HOME and an empty torch JIT cache")
    ap.add_argument("demo_args", nargs="*", help="after --: arguments for dscluster demo")
    args = ap.parse_args()

    env = dict(os.environ)
    phases: list[tuple[str, float]] = []
    t_start = time.time()
    if args.setup:
        subprocess.run([str(ROOT / "scripts" / "setup.sh"), "demo"], check=True)
        phases.append(("set-up (scripts/setup.sh demo)", time.time() - t_start))
        global VENV_BIN
        VENV_BIN = ROOT / ".venv" / "bin"
    if args.fresh:
        home = Path(tempfile.mkdtemp(prefix="dsc-demo-bench-", dir="/var/tmp"))
        os.chmod(home, 0o755)
        env.update(DSCLUSTER_HOME=str(home / "home"), DSCLUSTER_SHARED=str(home / "shared"),
                   TORCH_EXTENSIONS_DIR=str(home / "torch_extensions"), XDG_CACHE_HOME=str(home / "cache"))

    t0 = time.time()
    seen: dict[str, float] = {}
    out_lines: list[str] = []
    cli = [str(VENV_BIN / "dscluster")] if (VENV_BIN / "dscluster").exists() else \
        [sys.executable, "-c", "import sys; from dscluster.cli import main; sys.exit(main())"]  # PYTHONPATH=src
    proc = subprocess.Popen([*cli, "demo", *args.demo_args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    run_dir = None
    for line in proc.stdout:
        now = time.time()
        out_lines.append(line.rstrip("\n"))
        print(f"{now - t0:7.1f}s | {line}", end="", flush=True)
        for key, pattern in (("corpus", r"✓ corpus"), ("run", r"✓ run "), ("first_progress", r"step \d+/")):
            if key not in seen and re.search(pattern, line):
                seen[key] = now
        m = re.search(r"run directory: (\S+)", line)
        if m:
            run_dir = Path(m.group(1))
    rc = proc.wait()
    t_end = time.time()
    if rc != 0 or run_dir is None:
        print(f"demo failed (exit {rc})", file=sys.stderr)
        return 1

    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines() if x.strip()]
    launched = next(e["t"] for e in events if e["event"] == "launched")
    finished = next((e["t"] for e in events if e["event"] == "finished"), t_end)
    steps = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x.strip()]
    steps = [r for r in steps if "loss" in r and "event" not in r and "source" not in r]
    imported = rank0_first_stamp(run_dir) or launched
    first, last = steps[0], steps[-1]
    marks = [("start-up and corpus (command -> corpus ready)", t0, seen.get("corpus", t0)),
             ("launch preparation (corpus -> run created)", seen.get("corpus", t0), seen.get("run", launched)),
             ("run created -> DeepSpeed launched", seen.get("run", launched), launched),
             ("ranks start, import torch + deepspeed", launched, imported),
             ("DeepSpeed set-up, JIT ops, model, first step", imported, first["time"]),
             (f"training, steps {first['step']}->{last['step']}", first["time"], last["time"]),
             ("end: validation, sample, checkpoint, teardown", last["time"], finished),
             ("supervisor -> command exit", finished, t_end)]
    print()
    for name, a, b in marks:
        phases.append((name, b - a))
    for name, secs in phases:
        print(f"{secs:7.1f} s  {name}")
    total = t_end - (t_start if args.setup else t0)
    print(f"{total:7.1f} s  total{' (set-up included)' if args.setup else ''}")
    print(f"loss {first['loss']:.3f} (step {first['step']}) -> {last['loss']:.3f} (step {last['step']})")
    print(json.dumps({"phases_s": {n: round(s, 2) for n, s in phases}, "total_s": round(total, 2),
                      "first_loss": first["loss"], "last_loss": last["loss"], "steps": last["step"],
                      "run_dir": str(run_dir), "jit_built": any("built successfully" in x or "Building extension" in x
                                                                for x in _rank_logs(run_dir))}))
    return 0 if last["loss"] < first["loss"] else 2


def _rank_logs(run_dir: Path) -> list[str]:
    return [line for p in (run_dir / "logs").glob("*_rank*.log") for line in p.read_text(errors="replace").splitlines()]


if __name__ == "__main__":
    sys.exit(main())
