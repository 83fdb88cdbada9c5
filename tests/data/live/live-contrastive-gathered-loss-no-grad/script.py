"""Dual-encoder retrieval training with in-batch negatives from every rank: the user gathers the query and document
embeddings with dist.all_gather and builds the whole loss from the gathered copies."""
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


def gather(x):
    out = [torch.zeros_like(x) for _ in range(world)]
    dist.all_gather(out, x)
    return torch.cat(out)


for step in range(20):
    q, d = model(torch.randn(B, 32, generator=g), torch.randn(B, 48, generator=g))
    all_q, all_d = gather(q), gather(d)
    logits = all_q @ all_d.t() / 0.05
    labels = torch.arange(all_q.size(0))
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
