"""Reproducible shuffling copied from a GPU recipe: the DataLoader's generator is made on the rank's CUDA device.
This cluster's torch is the CPU build."""
import argparse

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--local_rank", type=int, default=0)
args = ap.parse_args()

dist.init_process_group(backend="gloo")
ds = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
g = torch.Generator(device=f"cuda:{args.local_rank}")
g.manual_seed(42)
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=g)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
