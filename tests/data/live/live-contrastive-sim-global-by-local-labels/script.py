"""Gathered queries with torch.distributed.nn.functional.all_gather (keeps the gradient) against the local documents:
the similarity matrix is (world*B) x B, the labels are arange(B)."""
# in-batch negatives from every rank (DDP, gloo, 2 processes)
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
        return F.normalize(self.query(q), dim=-1), F.normalize(self.doc(d), dim=-1)


dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
model = DDP(TwoTower())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(100 + rank)
B = 8

import torch.distributed.nn.functional as dnn  # noqa: E402

for step in range(20):
    q, d = model(torch.randn(B, 32, generator=g), torch.randn(B, 48, generator=g))
    all_q = torch.cat(dnn.all_gather(q))
    logits = all_q @ d.t() / 0.05
    labels = torch.arange(B)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
