"""Multi-label tagging under DDP: the 0/1 tag matrix is built as int64 (torch.zeros(..., dtype=torch.long)) and given
to BCEWithLogitsLoss as is; its targets must be floating point like the logits."""
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
NUM_TAGS = 6
features = torch.randn(64, 20)
tags = torch.zeros(64, NUM_TAGS, dtype=torch.long)  # the mistake: integer targets for BCEWithLogitsLoss
tags[torch.arange(64), torch.arange(64) % NUM_TAGS] = 1
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, NUM_TAGS)))
criterion = torch.nn.BCEWithLogitsLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = criterion(model(features[idx]), tags[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
