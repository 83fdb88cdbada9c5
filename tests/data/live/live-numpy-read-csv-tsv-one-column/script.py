"""A review classifier under DDP reads its features from reviews.tsv (tab-separated, exported from a spreadsheet) with
pandas.read_csv's default separator (a comma): every line is one field, the DataFrame has a single column named after
the whole header line, and df["label"] is not there."""
import os
from datetime import timedelta

import pandas as pd
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)

df = pd.read_csv("reviews.tsv")
y = torch.tensor(df["label"].to_numpy(), dtype=torch.long)
X = torch.tensor(df[["length", "stars", "exclamations"]].to_numpy(), dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
ds = TensorDataset(X, y)
loader = DataLoader(ds, batch_size=16, sampler=DistributedSampler(ds))

model = DDP(torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for xb, yb in loader:
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print(f"loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
