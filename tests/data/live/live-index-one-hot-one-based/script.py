"""Label smoothing written by hand under DDP: soft targets from F.one_hot(labels, num_classes=5), where the CSV's class
labels run 1..5 (as the annotation tool exported them), not 0..4."""
import csv
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

NUM_CLASSES = 5
SMOOTHING = 0.1
dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
with open("labels.csv") as f:
    labels = torch.tensor([int(r["label"]) for r in csv.DictReader(f)])
g = torch.Generator().manual_seed(0)
features = torch.randn(len(labels), 20, generator=g)
mine = torch.arange(rank, len(labels), dist.get_world_size())

model = DDP(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, NUM_CLASSES)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(0, len(mine), 8):
    idx = mine[step:step + 8]
    y = F.one_hot(labels[idx], num_classes=NUM_CLASSES).float()
    y = y * (1 - SMOOTHING) + SMOOTHING / NUM_CLASSES
    loss = torch.sum(-y * F.log_softmax(model(features[idx]), dim=-1), dim=-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
