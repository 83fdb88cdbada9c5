"""The smallest rank there is, for the scale benchmark: says it started, then waits (no torch, no DeepSpeed),
so that 32 simulated nodes fit in memory and the figures are dscluster's and DeepSpeed's launcher's own.

With --collective (the hung-collective fault of benchmarks/fault_detect.py) it joins a gloo process group and
all-reduces one number every 0.2 s; while --hang-file exists, rank --hang-rank sleeps in Python:
alive, in no collective, while its peers wait for it in theirs."""

import os
import sys
import time


def arg(name: str, default: str | None = None) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


print(f"rank {os.environ.get('RANK', '?')} started on {os.uname().nodename}", flush=True)
seconds = float(arg("--seconds", "600"))
if "--collective" not in sys.argv:
    time.sleep(seconds)
else:
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank, hang_file, one = dist.get_rank(), arg("--hang-file"), torch.ones(1)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        dist.all_reduce(one)
        if hang_file and rank == int(arg("--hang-rank", "0")) and os.path.exists(hang_file):
            print(f"hanging at {time.time():.3f}", flush=True)
            time.sleep(seconds)
        time.sleep(0.2)
    dist.destroy_process_group()
print("done", flush=True)
