"""A 10-class classifier with plain DDP. The dataset's labels are numbered 1..10 (as in the CSV the user read), the
head has 10 outputs, so cross_entropy meets class 10, one past the last."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
features = torch.randn(64, 20)
labels = torch.arange(64) % 10 + 1  # the mistake: labels 1..10, not 0..9
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = torch.nn.functional.cross_entropy(model(features[idx]), labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
