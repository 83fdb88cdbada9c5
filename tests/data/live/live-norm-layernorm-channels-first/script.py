"""A ConvNeXt-style block under DDP: the user swaps BatchNorm2d for nn.LayerNorm(channels) but applies it to the
convolution's channels-first (N, C, H, W) output; LayerNorm normalises over the last dimensions (W here)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pw = nn.Sequential(nn.Conv2d(dim, 4 * dim, 1), nn.GELU(), nn.Conv2d(4 * dim, dim, 1))

    def forward(self, x):
        return x + self.pw(self.norm(self.dwconv(x)))


net = nn.Sequential(nn.Conv2d(3, 48, 4, stride=4), Block(48), Block(48), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                    nn.Linear(48, 10))
model = DDP(net)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(4, 3, 64, 64), torch.randint(0, 10, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
