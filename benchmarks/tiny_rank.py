"""The smallest rank there is, for the scale benchmark: says it started, then waits (no torch, no DeepSpeed),
so that 32 simulated nodes fit in memory and the figures are dscluster's and DeepSpeed's launcher's own."""

import os
import sys
import time

print(f"rank {os.environ.get('RANK', '?')} started on {os.uname().nodename}", flush=True)
seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 600.0
time.sleep(seconds)
print("done", flush=True)
