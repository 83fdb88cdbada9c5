"""Retrieval training on a hand-split corpus of 45 pairs (rank 0 takes the even ids, rank 1 the odd ones): the last
batch holds 7 pairs on rank 0 and 6 on rank 1, gathered with torch.distributed.nn.functional.all_gather."""
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

pairs = torch.utils.data.TensorDataset(torch.randn(45, 32, generator=torch.Generator().manual_seed(1)),
                                       torch.randn(45, 48, generator=torch.Generator().manual_seed(2)))
shard = torch.utils.data.Subset(pairs, list(range(rank, 45, world)))
loader = torch.utils.data.DataLoader(shard, batch_size=B)
for epoch in range(2):
    for step, (qx, dx) in enumerate(loader):
        q, d = model(qx, dx)
        all_d = torch.cat(dnn.all_gather(d))
        logits = q @ all_d.t() / 0.05
        loss = F.cross_entropy(logits, torch.arange(q.size(0)) + rank * q.size(0))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
