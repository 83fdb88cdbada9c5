"""Gradient accumulation over 4 micro-batches with DDP: the user skips the all-reduce on the first three through
no_sync, but writes `with model.no_sync:` (the method, not called)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

ACCUM = 4
dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(int(os.environ.get("RANK", 0)))
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i in range(16):
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    if (i + 1) % ACCUM != 0:
        with model.no_sync:  # the mistake: no_sync is a method returning the context manager
            loss = torch.nn.functional.mse_loss(model(x), y) / ACCUM
            loss.backward()
    else:
        loss = torch.nn.functional.mse_loss(model(x), y) / ACCUM
        loss.backward()
        opt.step()
        opt.zero_grad()
dist.destroy_process_group()
