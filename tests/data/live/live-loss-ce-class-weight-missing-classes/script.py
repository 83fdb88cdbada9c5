"""An imbalanced 10-class classifier under DDP: the class weights are 1/bincount(labels) of the training labels, but
bincount without minlength stops at the largest label seen (7), so the weight tensor has 8 entries for 10 classes."""
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
NUM_CLASSES = 10
features = torch.randn(64, 20)
labels = torch.arange(64) % 8  # classes 8 and 9 are absent from this split
counts = torch.bincount(labels)  # the mistake: no minlength=NUM_CLASSES
class_weights = counts.sum() / (counts.float() * len(counts))
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, NUM_CLASSES)))
criterion = torch.nn.CrossEntropyLoss(weight=class_weights)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = criterion(model(features[idx]), labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
