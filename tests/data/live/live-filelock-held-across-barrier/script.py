"""The user guards a shared dataset cache with a file lock (as HF datasets' cache does): whoever takes the lock builds
the cache if it is missing. Inside the lock, rank 0 then waits at a barrier "so everyone sees the finished cache";
rank 1 is blocked on the lock rank 0 holds, so it never reaches the barrier. Short process-group timeout while
debugging."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from filelock import FileLock

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
cache = "features.pt"
if rank == 0 and os.path.exists(cache):
    os.remove(cache)
dist.barrier()
if rank == 1:
    import time
    time.sleep(1)  # rank 0 gets to the lock first

with FileLock(cache + ".lock"):
    if not os.path.exists(cache):
        torch.save(torch.randn(1000, 16), cache)
    dist.barrier()  # the mistake: a collective while holding a lock the other rank needs to reach it

features = torch.load(cache)
print(f"rank {rank}: {features.shape[0]} cached features")
dist.destroy_process_group()
