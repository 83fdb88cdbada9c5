"""A classifier under DDP with per-sample weights: the loss is computed with reduction="none" and multiplied by the
weights, and the weighted per-sample vector goes to loss.backward() without .mean() / .sum()."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
features = torch.randn(64, 20)
labels = torch.arange(64) % 5
sample_weights = torch.rand(64)
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5)))
criterion = torch.nn.CrossEntropyLoss(reduction="none")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = criterion(model(features[idx]), labels[idx]) * sample_weights[idx]  # the mistake: never reduced
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
