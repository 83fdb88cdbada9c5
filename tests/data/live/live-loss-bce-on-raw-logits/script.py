"""A binary classifier under DDP whose head ends in a plain Linear (raw logits) trained with nn.BCELoss, which takes
probabilities in [0, 1] (the user meant BCEWithLogitsLoss, or a sigmoid in the head)."""
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
labels = (features[:, 0] > 0).float().unsqueeze(1)
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
criterion = torch.nn.BCELoss()  # the mistake: the model returns logits, not probabilities
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = criterion(model(features[idx]), labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
