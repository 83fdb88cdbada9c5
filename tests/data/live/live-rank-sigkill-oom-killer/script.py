"""The user's rank 1 builds an in-memory cache of the whole dataset that outgrows the node's RAM, and the kernel's OOM
killer ends it with SIGKILL (the script sends itself SIGKILL at that point, as the OOM killer does: nothing is
printed, no traceback)."""
import os
import signal
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
cache = {}
for step in range(20):
    x = torch.randn(8, 16)
    cache[step] = x  # the cache that grows without bound on the real node
    if rank == 1 and step == 5:
        os.kill(os.getpid(), signal.SIGKILL)  # where the OOM killer struck
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
