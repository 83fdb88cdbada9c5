"""A 10-class classifier under DDP whose labels were one-hot encoded (F.one_hot, int64) in the data preparation,
as for a Keras categorical_crossentropy: cross_entropy reads a (B, C) target as class probabilities and wants floats."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
features = torch.randn(64, 20)
labels = F.one_hot(torch.arange(64) % 10, num_classes=10)  # the mistake: one-hot int64, not class indices
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10)))
criterion = torch.nn.CrossEntropyLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = criterion(model(features[idx]), labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
