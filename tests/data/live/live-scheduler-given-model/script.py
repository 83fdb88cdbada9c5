"""The user builds a StepLR but passes the model instead of the optimizer (a slip when refactoring)."""
import os  # noqa: F401

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = DDP(torch.nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(model, step_size=10, gamma=0.5)  # the mistake: model, not optimizer
for step in range(5):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
dist.destroy_process_group()
