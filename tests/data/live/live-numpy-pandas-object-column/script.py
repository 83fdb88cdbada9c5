"""A churn classifier under DDP: the feature table is a pandas DataFrame that still holds a text column (the plan's
name), and df[feature_cols].values is a numpy object array that torch cannot turn into a tensor."""
import os
from datetime import timedelta

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
rng = np.random.default_rng(0)

n = 400
df = pd.DataFrame({
    "tenure": rng.integers(1, 72, n).astype(float),
    "monthly": rng.normal(60, 20, n),
    "support_calls": rng.poisson(2, n).astype(float),
    "plan": rng.choice(["basic", "plus", "pro"], n),
    "churn": rng.integers(0, 2, n),
})
feature_cols = [c for c in df.columns if c != "churn"]
X = torch.tensor(df[feature_cols].values, dtype=torch.float32)
y = torch.tensor(df["churn"].values)
ds = TensorDataset(X, y)
loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))

model = DDP(torch.nn.Sequential(torch.nn.Linear(len(feature_cols), 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for xb, yb in loader:
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print(f"loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
