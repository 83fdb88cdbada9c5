"""The user drops noisy examples at random, keeping each with p=0.9, after seeding Python's random with the rank
(meant for per-rank augmentation); then a DistributedSampler shards the kept set. Each rank filtered a different
subset of a different size, so the ranks run different numbers of DDP steps."""
import random
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
random.seed(rank)
torch.manual_seed(0)

xs, ys = torch.randn(400, 8), torch.randn(400, 1)
keep = [i for i in range(400) if random.random() < 0.9]
train_ds = TensorDataset(xs[keep], ys[keep])
loader = DataLoader(train_ds, batch_size=4, sampler=DistributedSampler(train_ds, shuffle=False))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(2):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"rank {rank} epoch {epoch} steps {len(loader)}")
dist.destroy_process_group()
