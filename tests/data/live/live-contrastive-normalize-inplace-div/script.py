"""Dual-encoder training: the user normalises the embeddings in place (emb /= emb.norm(...)) to save memory."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class TwoTower(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.query = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16))
        self.doc = torch.nn.Sequential(torch.nn.Linear(48, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16))

    def forward(self, q, d):
        q, d = self.query(q), self.doc(d)
        q /= q.norm(dim=-1, keepdim=True)
        d /= d.norm(dim=-1, keepdim=True)
        return q, d


dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(TwoTower())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(100 + rank)
for step in range(20):
    q, d = model(torch.randn(8, 32, generator=g), torch.randn(8, 48, generator=g))
    loss = F.cross_entropy(q @ d.t() / 0.05, torch.arange(8))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
