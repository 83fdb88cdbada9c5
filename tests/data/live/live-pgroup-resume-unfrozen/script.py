"""Stage 2 of a two-stage fine-tune: stage 1 trained with the embedding frozen, its optimizer built over the
trainable parameters only, and saved model and optimizer (rank 0 writes that checkpoint first here, as stage 1 did).
Stage 2 unfreezes the embedding, builds the optimizer over every parameter (same one group) and loads stage 1's
optimizer state_dict."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()


def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 100))


def batch():
    ids = torch.randint(0, 100, (4, 8))
    return ids, ids.view(-1)


if rank == 0 and not os.path.exists("stage1.pt"):  # stage 1
    m = build()
    m[0].weight.requires_grad = False
    o = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-3)
    ids, tgt = batch()
    torch.nn.functional.cross_entropy(m(ids).view(-1, 100), tgt).backward()
    o.step()
    torch.save({"model": m.state_dict(), "optimizer": o.state_dict()}, "stage1.pt")
dist.barrier()

model = build()  # stage 2: everything trains
ckpt = torch.load("stage1.pt")
model.load_state_dict(ckpt["model"])
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
opt.load_state_dict(ckpt["optimizer"])
model = DDP(model)
for _step in range(5):
    ids, tgt = batch()
    loss = torch.nn.functional.cross_entropy(model(ids).view(-1, 100), tgt)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
