"""Rank 0 appends a row per step to metrics.csv; the user opened the file with open(path) (read mode, the default)
where they meant open(path, "a", newline="")."""
import csv

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
model = DDP(torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
if rank == 0:
    with open("metrics.csv", "w", newline="") as f:
        csv.writer(f).writerow(["step", "loss"])
for step in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        with open("metrics.csv") as f:
            csv.writer(f).writerow([step, loss.item()])
dist.destroy_process_group()
