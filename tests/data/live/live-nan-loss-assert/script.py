"""A regression model with plain DDP. The user standardises every feature column by its std, and one column of the
data is constant (std 0), so the inputs, and then the loss, are NaN; the script's own check stops on it."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
g = torch.Generator().manual_seed(0)
X = torch.randn(64, 6, generator=g)
X[:, 3] = 1.0  # a constant column in the data
X = (X - X.mean(0)) / X.std(0)  # the mistake: std 0 for that column gives 0/0 = NaN
y = torch.randn(64, 1, generator=g)
model = DDP(torch.nn.Linear(6, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = torch.nn.functional.mse_loss(model(X[idx]), y[idx])
    assert torch.isfinite(loss), f"loss is {loss.item()} at step {step}"
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
