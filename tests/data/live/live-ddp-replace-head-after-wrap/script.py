"""The user wraps a pretrained backbone+head in DDP, then swaps in a new 5-class head (model.module.head = ...) to
fine-tune, after wrapping: DDP still holds the old head's parameters, which no longer take part in the loss."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Linear(16, 32)
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))


model = DDP(Net())
model.module.head = torch.nn.Linear(32, 5)  # new task: 5 classes
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x, y = torch.randn(8, 16), torch.randint(0, 5, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if int(os.environ["RANK"]) == 0:
        print("step", step, loss.item())
dist.destroy_process_group()
