"""A hand-written feature normaliser keeps an exponential running mean of its input; the user stores that running
mean as an nn.Parameter (so that it moves with .to() and is saved) and updates it in place in forward, under DDP."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class RunningCenter(nn.Module):
    def __init__(self, d, momentum=0.1):
        super().__init__()
        self.running_mean = nn.Parameter(torch.zeros(d))
        self.momentum = momentum

    def forward(self, x):
        if self.training:
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0).detach())
        return x - self.running_mean


net = nn.Sequential(RunningCenter(12), nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 1))
model = DDP(net, find_unused_parameters=False)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
for step in range(5):
    x, y = torch.randn(16, 12) * 3 + 2, torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
