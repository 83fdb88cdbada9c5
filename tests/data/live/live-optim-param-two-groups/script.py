"""The user meant to give the head a 10x learning rate: one group for the head, one for 'everything else', but the
second group is model.parameters(), which holds the head's parameters too."""
import os  # noqa: F401

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)))
head = model.module[2]
opt = torch.optim.AdamW([
    {"params": head.parameters(), "lr": 1e-2},
    {"params": model.parameters(), "lr": 1e-3},  # the mistake: includes head's parameters again
])
for step in range(5):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
