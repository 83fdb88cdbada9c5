"""Seeding DataLoader workers for reproducibility: the user's seed_worker() takes no argument (it reads
torch.initial_seed() itself), but the DataLoader calls worker_init_fn(worker_id)."""
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def seed_worker():
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


if __name__ == "__main__":
    dist.init_process_group(backend="gloo")
    torch.manual_seed(0)
    ds = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
    g = torch.Generator()
    g.manual_seed(0)
    loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds), num_workers=2,
                        worker_init_fn=seed_worker, generator=g)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()
