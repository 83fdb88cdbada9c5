"""A regression model under DDP. The script turns warnings into errors (warnings.simplefilter("error"), to catch
problems early); the (B, 1) predictions go to MSELoss with (B,) targets, whose broadcasting warning then raises."""
import argparse
import os
import warnings

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
warnings.simplefilter("error")
features = torch.randn(64, 8)
targets = features.sum(dim=1)  # (B,)
model = DDP(torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)))
criterion = torch.nn.MSELoss()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = criterion(model(features[idx]), targets[idx])  # the mistake: (B, 1) against (B,)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
