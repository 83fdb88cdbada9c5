"""An MLP with BatchNorm1d trained with DDP on 34 samples: DistributedSampler gives each of the 2 ranks 17, the
DataLoader batches them by 8 without drop_last, so each rank's last batch holds a single sample."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)

data = TensorDataset(torch.randn(34, 20), torch.randint(0, 3, (34,)))
sampler = DistributedSampler(data, shuffle=True, seed=0)
loader = DataLoader(data, batch_size=8, sampler=sampler)

model = DDP(nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 3)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    sampler.set_epoch(epoch)
    model.train()
    for i, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:
            print(f"epoch {epoch} batch {i} size {len(x)} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
