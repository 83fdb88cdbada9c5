"""Hard-negative mining every 5 steps: rank 0 gathers the document embeddings of every rank and picks the hardest
negatives, inside if rank == 0 (mining is "only bookkeeping")."""
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

hard = None
for step in range(20):
    q, d = model(torch.randn(B, 32, generator=g), torch.randn(B, 48, generator=g))
    if step % 5 == 4 and rank == 0:
        with torch.no_grad():
            docs = [torch.zeros_like(d) for _ in range(world)]
            dist.all_gather(docs, d)
            sims = q @ torch.cat(docs).t()
            sims[torch.arange(B), torch.arange(B)] = -1
            hard = sims.topk(4, dim=1).indices
            print(f"step {step} mined hard negatives {tuple(hard.shape)}", flush=True)
    all_d = torch.cat(dnn.all_gather(d))
    logits = q @ all_d.t() / 0.05
    loss = F.cross_entropy(logits, torch.arange(B) + rank * B)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
