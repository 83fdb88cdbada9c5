"""A tabular MLP trained under DDP in bfloat16 on CPU nodes: the model is cast with model.to(torch.bfloat16), but
the feature batches from the DataLoader stay float32; the model's first layer is a BatchNorm1d over the raw
features."""
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

features = torch.randn(256, 24) * 5 + 3
target = features[:, :4].sum(1, keepdim=True)
ds = TensorDataset(features, target)
loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds, seed=0))

net = nn.Sequential(nn.BatchNorm1d(24), nn.Linear(24, 64), nn.ReLU(), nn.Linear(64, 1))
model = DDP(net.to(torch.bfloat16))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(2):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        pred = model(x)
        loss = nn.functional.mse_loss(pred.float(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
