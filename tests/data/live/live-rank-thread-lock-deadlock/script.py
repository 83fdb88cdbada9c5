"""The user prefetches batches in a background thread. The prefetch thread takes the cache lock then the file lock;
the main thread, when its shard runs low (only rank 1's does here), takes the file lock then the cache lock to
refill: the two threads wait on each other forever (a lock-order deadlock). Rank 0 goes on and waits in DDP's
gradient all_reduce for rank 1. The user's process-group timeout is 3 minutes; the script ends itself after 4 (its
own alarm) so the capture cannot outlive it."""
import signal
import threading
import time
from datetime import timedelta

import torch
import torch.distributed as dist

signal.alarm(240)
dist.init_process_group(backend="gloo", timeout=timedelta(seconds=180))
rank = dist.get_rank()
cache_lock, file_lock = threading.Lock(), threading.Lock()
queue = []


def prefetch():
    while True:
        with cache_lock:
            time.sleep(0.05)  # decode a batch while holding the cache
            with file_lock:
                queue.append(torch.randn(8, 16))
        time.sleep(0.01)


threading.Thread(target=prefetch, daemon=True).start()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(50):
    if rank == 1 and step == 3:  # this rank's shard runs low: refill it
        with file_lock:
            time.sleep(0.05)  # open the next shard while holding the file lock
            with cache_lock:
                queue.clear()
    x = torch.randn(8, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
    time.sleep(0.2)
dist.destroy_process_group()
