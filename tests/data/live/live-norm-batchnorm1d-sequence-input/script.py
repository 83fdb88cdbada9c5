"""A small transformer-style encoder under DDP where the user normalises the (batch, seq, hidden) activations with
nn.BatchNorm1d(hidden), as for a (batch, hidden) MLP; BatchNorm1d takes (N, C) or (N, C, L), channels second."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, vocab=100, hidden=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.attn = nn.MultiheadAttention(hidden, 4, batch_first=True)
        self.norm = nn.BatchNorm1d(hidden)
        self.head = nn.Linear(hidden, 2)

    def forward(self, ids):
        h = self.emb(ids)
        a, _ = self.attn(h, h, h, need_weights=False)
        h = self.norm(h + a)
        return self.head(h.mean(1))


model = DDP(Encoder())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    ids, y = torch.randint(0, 100, (8, 24)), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
