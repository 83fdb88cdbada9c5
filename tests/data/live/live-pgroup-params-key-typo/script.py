"""Discriminative learning rates: the backbone and the head each get a param group, and the head's group is written
with the key "param" instead of "params"."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
backbone = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU())
head = torch.nn.Linear(32, 4)
model = DDP(torch.nn.Sequential(backbone, head))
opt = torch.optim.SGD([
    {"params": backbone.parameters(), "lr": 1e-3},
    {"param": head.parameters(), "lr": 1e-2},
], lr=1e-3, momentum=0.9)
for _step in range(10):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
