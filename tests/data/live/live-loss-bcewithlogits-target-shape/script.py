"""A binary classifier under DDP: the head has one output, so the logits are (B, 1), while the 0/1 labels are a (B,)
float vector; BCEWithLogitsLoss wants the same shape for both (squeeze(-1) or labels.unsqueeze(1))."""
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
labels = (features[:, 0] > 0).float()
model = DDP(torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
criterion = torch.nn.BCEWithLogitsLoss()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    idx = torch.arange(step * 16, step * 16 + 16)
    loss = criterion(model(features[idx]), labels[idx])  # the mistake: (B, 1) logits against (B,) labels
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
