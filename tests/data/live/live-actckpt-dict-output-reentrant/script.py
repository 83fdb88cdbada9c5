"""Activation checkpointing added around a block that returns a dict (hidden states and an auxiliary loss, as a
Hugging Face style output) with torch.utils.checkpoint(use_reentrant=True): the reentrant checkpoint is an
autograd.Function, which tracks only tensors it returns directly, so the dict's tensors come back with no graph."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.ff = torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                      torch.nn.Linear(4 * d, d))

    def forward(self, x):
        h = x + self.ff(x)
        return {"hidden_states": h, "aux_loss": 1e-3 * h.pow(2).mean()}


class Net(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.inp = torch.nn.Linear(8, d)
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(3))
        self.head = torch.nn.Linear(d, 1)

    def forward(self, x):
        h = self.inp(x)
        aux = 0.0
        for blk in self.blocks:
            out = checkpoint(blk, h, use_reentrant=True)
            h, aux = out["hidden_states"], aux + out["aux_loss"]
        return self.head(h), aux


model = DDP(Net())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    pred, aux = model(x)
    loss = torch.nn.functional.mse_loss(pred, y) + aux
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
