"""Evaluation of a retrieval model under DDP on CPU, run under bf16 autocast for speed: the per-class centroid of
the embeddings is accumulated with index_add_ into a float32 buffer made with torch.zeros, while the embeddings
coming out of the autocast region are bfloat16."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
world = dist.get_world_size()
torch.manual_seed(0)
N_CLASSES, D = 10, 32

encoder = DDP(nn.Sequential(nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, D)))
opt = torch.optim.AdamW(encoder.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(16, 48)
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        emb = encoder(x)
        loss = emb.float().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)

encoder.eval()
sums = torch.zeros(N_CLASSES, D)
counts = torch.zeros(N_CLASSES)
with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    for _ in range(4):
        x = torch.randn(16, 48)
        y = torch.randint(0, N_CLASSES, (16,))
        emb = encoder(x)
        sums.index_add_(0, y, emb)
        counts.index_add_(0, y, torch.ones(16))
dist.all_reduce(sums)
dist.all_reduce(counts)
centroids = sums / counts.clamp(min=1).unsqueeze(1)
if rank == 0:
    print("centroid norms", centroids.norm(dim=1))
dist.destroy_process_group()
