"""Magnitude pruning during DDP training: the user prunes 'weight' of the DDP-wrapped model object itself instead of its
layers (ddp.module.<layer>)."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.utils.prune as prune
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

ddp = DDP(nn.Linear(32, 8))
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for step in range(6):
    loss = ddp(torch.randn(16, 32)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 3:
        prune.l1_unstructured(ddp, name="weight", amount=0.5)
        print(rank, "pruned 50%")
dist.destroy_process_group()
