"""A tiny sequence model trained under DDP in bfloat16 on CPU nodes (model.to(torch.bfloat16), inputs cast to
bfloat16): the sinusoidal position table is kept as a plain tensor attribute (self.pos = ...) instead of a
registered buffer, so Module.to() never sees it and it stays float32 while the weights become bfloat16."""
import math
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


def sinusoid(n, d):
    pos = torch.arange(n).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    table = torch.zeros(n, d)
    table[:, 0::2], table[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return table


class SeqModel(nn.Module):
    def __init__(self, d=16, hidden=32, max_len=64):
        super().__init__()
        self.pos = sinusoid(max_len, d)  # plain attribute, not register_buffer
        self.proj = nn.Linear(d, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.proj(x + self.pos[: x.shape[1]])
        return self.out(self.norm(h)).mean(1)


model = DDP(SeqModel().to(torch.bfloat16))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(4, 10, 16).to(torch.bfloat16)
    y = torch.randn(4, 1)
    loss = nn.functional.mse_loss(model(x).float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
