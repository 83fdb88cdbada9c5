"""A classifier head written as an nn.Module subclass whose __init__ sets its layers without calling
super().__init__() first: nn.Module's __setattr__ has no _modules dict to register them in."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class ClassifierHead(nn.Module):
    def __init__(self, hidden, num_classes, dropout=0.1):
        self.dropout = dropout
        self.proj = nn.Linear(hidden, hidden)
        self.act = nn.GELU()
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = nn.functional.dropout(self.act(self.proj(x)), self.dropout, self.training)
        return self.out(x)


model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), ClassifierHead(64, 10))
model = DDP(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(5):
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(rank, "done", loss.item())
dist.destroy_process_group()
