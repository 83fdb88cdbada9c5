"""A module counts the batches it has seen in a registered buffer (so the count is saved in the checkpoint) and
increments it in forward with `self.seen = self.seen.item() + x.shape[0]`: a registered buffer can only be given a
tensor (or None), not a Python int."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class WarmupScaledEncoder(nn.Module):
    def __init__(self, dim, warmup=1000):
        super().__init__()
        self.warmup = warmup
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.register_buffer("seen", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        if self.training:
            self.seen = self.seen.item() + x.shape[0]
        scale = min(1.0, float(self.seen) / self.warmup)
        return self.net(x) * scale + x


model = DDP(nn.Sequential(WarmupScaledEncoder(24), nn.Linear(24, 2)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(5):
    x, y = torch.randn(8, 24), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(rank, "done", loss.item())
dist.destroy_process_group()
