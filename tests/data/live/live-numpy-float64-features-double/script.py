"""A tabular regressor under DDP: the features are built with numpy (float64 by default) and turned into tensors with
torch.from_numpy, which keeps numpy's dtype, while the model's weights are float32."""
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

X = rng.normal(size=(512, 12))            # float64
w = rng.normal(size=(12, 1))
y = X @ w + 0.1 * rng.normal(size=(512, 1))
X = (X - X.mean(0)) / X.std(0)
ds = TensorDataset(torch.from_numpy(X), torch.from_numpy(y))
loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))

model = DDP(torch.nn.Sequential(torch.nn.Linear(12, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for xb, yb in loader:
        loss = torch.nn.functional.mse_loss(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
