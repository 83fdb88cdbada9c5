"""A sensor-regression script under DDP standardises its features in place on the array pandas gives back
(df[cols].to_numpy(), then x -= mean; x /= std), as it did with pandas 1.x/2.x. Under pandas 3's copy-on-write the
array is a read-only view of the DataFrame's data, and numpy refuses to write into it."""
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

cols = ["temp", "pressure", "humidity", "vibration"]
df = pd.DataFrame(rng.normal(size=(500, 4)) * [5, 30, 10, 0.2] + [20, 1000, 50, 1], columns=cols)
df["target"] = df["temp"] * 0.3 - df["vibration"] * 2 + rng.normal(size=500)

x = df[cols].to_numpy()
x -= x.mean(axis=0)
x /= x.std(axis=0)
ds = TensorDataset(torch.from_numpy(x).float(), torch.from_numpy(df[["target"]].to_numpy()).float())
loader = DataLoader(ds, batch_size=25, sampler=DistributedSampler(ds))

model = DDP(torch.nn.Sequential(torch.nn.Linear(4, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for xb, yb in loader:
    loss = torch.nn.functional.mse_loss(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print(f"loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
