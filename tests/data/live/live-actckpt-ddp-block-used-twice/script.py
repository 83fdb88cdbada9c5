"""A weight-tied recurrent-depth model under DDP: one block is applied twice per step (the same parameters used
twice), each application under torch.utils.checkpoint(use_reentrant=True). DDP's default (static_graph=False) marks
each parameter ready once per backward; the reentrant checkpoint runs a separate backward per application."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class Looped(torch.nn.Module):
    def __init__(self, d=32, loops=2):
        super().__init__()
        self.inp = torch.nn.Linear(8, d)
        self.block = torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, d), torch.nn.GELU())
        self.loops = loops
        self.head = torch.nn.Linear(d, 1)

    def forward(self, x):
        h = self.inp(x)
        for _ in range(self.loops):
            h = h + checkpoint(self.block, h, use_reentrant=True)
        return self.head(h)


model = DDP(Looped())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
