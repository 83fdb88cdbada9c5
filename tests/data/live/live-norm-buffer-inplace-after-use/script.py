"""A hand-written input normaliser under DDP keeps a running standard deviation in a registered buffer: forward
divides the input by the buffer, then updates the buffer in place (mul_/add_) for the next step, as BatchNorm does
with its running stats. Here the buffer itself took part in the graph, and autograd saved it for backward."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class RunningScale(nn.Module):
    def __init__(self, d, momentum=0.1):
        super().__init__()
        self.register_buffer("running_std", torch.ones(d))
        self.momentum = momentum

    def forward(self, x):
        out = x / self.running_std
        if self.training:
            with torch.no_grad():
                self.running_std.mul_(1 - self.momentum).add_(self.momentum * x.std(0))
        return out


model = DDP(nn.Sequential(nn.Linear(16, 16), RunningScale(16), nn.ReLU(), nn.Linear(16, 1)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(8, 16) * 4, torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
