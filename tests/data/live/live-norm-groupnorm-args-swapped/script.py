"""A U-Net-style block using GroupNorm (batch-size independent, preferred over BatchNorm for small per-rank
batches); the user writes GroupNorm(channels, groups) instead of nn.GroupNorm(num_groups, num_channels)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


def conv_block(cin, cout, groups=8):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1),
        nn.GroupNorm(cout, groups),
        nn.SiLU(),
    )


net = nn.Sequential(conv_block(3, 64), conv_block(64, 64), nn.Conv2d(64, 3, 1))
model = DDP(net)
opt = torch.optim.AdamW(model.parameters(), lr=2e-4)
for step in range(5):
    x = torch.randn(2, 3, 32, 32)
    loss = nn.functional.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
