"""Simulated cluster: `up` (until ssh to every node works) and `down` wall time by node count.

    sudo .venv/bin/python benchmarks/sim_lifecycle.py [3 8 16 32]

Prints one line per size. Needs root. Uses its own cluster name and a throwaway home.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from dscluster.sim import SimCluster, down, leftovers


def main(sizes: list[int]) -> int:
    if os.geteuid() != 0:
        print("needs root (network namespaces)", file=sys.stderr)
        return 6
    home = Path(tempfile.mkdtemp(prefix="dsc-bench-", dir="/var/tmp"))
    os.chmod(home, 0o755)
    try:
        print(f"{'nodes':>5}  {'up (s)':>7}  {'down (s)':>8}  leftovers")
        for n in sizes:
            started = time.perf_counter()
            sim = SimCluster.up("benchsim", n, home=home)
            up_s = time.perf_counter() - started
            started = time.perf_counter()
            down("benchsim", purge=True)
            down_s = time.perf_counter() - started
            left = sum(len(v) for v in leftovers("benchsim").values())
            print(f"{n:>5}  {up_s:>7.2f}  {down_s:>8.2f}  {left}", flush=True)
            del sim
    finally:
        down("benchsim", purge=True)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main([int(a) for a in sys.argv[1:]] or [3, 8, 16, 32]))
