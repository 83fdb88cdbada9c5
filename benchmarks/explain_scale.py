"""explain's time against log size, 1 KB to 8 MB: a real failure log repeated, and the worst lines a hostile
program can write (one huge line of one word, whitespace only, NCCL lines, cut-off tracebacks, thousands of
exception lines). Reading a log must cost time in proportion to its size whatever it holds (issue 45).

    python3 benchmarks/explain_scale.py                    # every kind, 1 KB .. 8 MB
    python3 benchmarks/explain_scale.py --max-seconds 60   # stop growing a kind once one size takes longer
    python3 benchmarks/explain_scale.py --supervisor       # also: five rank logs of one 256 KB line, as the verdict reads them

Prints one JSON line per (kind, size): CPU seconds of this process (`time.process_time`: what the machine's
other load changes least) and wall seconds, and µs per KB (flat = linear), then the machine's load average.
`dscluster explain FILE` reads a file's last 2 MB (`commands/explain.py`); the supervisor 64 KB of each log.
Run it with PYTHONPATH=OLD_CHECKOUT/src to measure another version the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from dscluster import explain

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "explain"
SIZES = (1 << 10, 8 << 10, 64 << 10, 256 << 10, 1 << 20, 2 << 20, 8 << 20)
KINDS = {
    "real log (cuda-oom.log repeated)": lambda: (DATA / "cuda-oom.log").read_text(),
    "one line of 'NET/IB '": lambda: "NET/IB ",
    "lines of 'NET/IB NET/IB ...'": lambda: "NET/IB NET/IB NET/IB NET/IB NET/IB NET/IB\n",
    "whitespace lines": lambda: " \n\t\n",
    "one line of 'NCCL '": lambda: "NCCL ",
    "one line of 'orted '": lambda: "orted ",
    "cut-off tracebacks": lambda: "Traceback (most recent call last):\n",
    "exception lines": lambda: "ValueError: bad value\n",
    # Thousands of ranks (one stream each) with the same last words after another rank's watchdog timeout: every
    # stream matches exit-abort, whose set-aside check looks at all streams (sigwords.found_in_any reads them once).
    "ranks' aborts at exit after a timeout": lambda: "[rank0]: Watchdog caught collective operation timeout\n" + "".join(
        f"[rank{i}]: terminate called without an active exception\n" for i in range(200_000)),
}


def make(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def measure(text: str) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    explain.explain_logs([explain.LogText(text)])
    return time.process_time() - c0, time.perf_counter() - w0


def supervisor_case() -> dict:
    """Five rank logs, each one 256 KB line of `NET/IB `, explained as the supervisor's verdict reads them
    (explain_files: the last 64 KB of each)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for rank in range(5):
            path = Path(tmp) / f"train_rank{rank}.log"
            path.write_text(make("NET/IB ", 256 << 10) + "\n")
            paths.append(path)
        c0, w0 = time.process_time(), time.perf_counter()
        explain.explain_files(paths)
        return {"kind": "supervisor: 5 rank logs of one 256 KB line", "cpu_s": round(time.process_time() - c0, 4),
                "wall_s": round(time.perf_counter() - w0, 4)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max-seconds", type=float, default=120.0, help="stop growing a kind after a size took longer")
    p.add_argument("--kind", action="append", help="only these kinds (substring)")
    p.add_argument("--supervisor", action="store_true", help="also the supervisor's case (five rank logs)")
    args = p.parse_args()
    print(json.dumps({"explain": explain.__file__, "load_before": os.getloadavg(), "cpus": os.cpu_count(),
                      "note": "shared machine: other engineers' tests run at the same time"}), flush=True)
    for kind, unit in KINDS.items():
        if args.kind and not any(k in kind for k in args.kind):
            continue
        for size in SIZES:
            cpu, wall = measure(make(unit(), size))
            print(json.dumps({"kind": kind, "bytes": size, "cpu_s": round(cpu, 4), "wall_s": round(wall, 4),
                              "us_per_kb": round(cpu * 1e6 / (size / 1024), 1)}), flush=True)
            if wall > args.max_seconds:
                print(json.dumps({"kind": kind, "stopped": f"{size} bytes took {wall:.0f} s"}), flush=True)
                break
    if args.supervisor:
        print(json.dumps(supervisor_case()), flush=True)
    print(json.dumps({"load_after": os.getloadavg()}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
