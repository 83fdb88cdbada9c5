"""A classifier under DDP whose class labels come from a numpy array built with dtype=np.int32 (to save memory in the
preprocessing cache); torch.from_numpy keeps int32 and cross_entropy wants int64 (Long) class indices."""
import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
rng = np.random.default_rng(0)

features = rng.normal(size=(600, 20)).astype(np.float32)
labels = (features[:, :5].sum(1) > 0).astype(np.int32) + (features[:, 5] > 1).astype(np.int32)  # 3 classes
ds = TensorDataset(torch.from_numpy(features), torch.from_numpy(labels))
loader = DataLoader(ds, batch_size=50, sampler=DistributedSampler(ds, shuffle=True))

model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(), torch.nn.Linear(64, 3)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for xb, yb in loader:
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
