"""A multi-task model keeps one head per task in an nn.ModuleDict keyed by the task names from the data config, and
those names are dotted ("sentiment.binary", "topic.coarse"): a module name cannot contain '.' (state_dict keys use
it as the separator)."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
TASKS = {"sentiment.binary": 2, "topic.coarse": 6, "topic.fine": 20}


class MultiTask(nn.Module):
    def __init__(self, dim, tasks):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(40, dim), nn.ReLU())
        self.heads = nn.ModuleDict({name: nn.Linear(dim, n) for name, n in tasks.items()})

    def forward(self, x):
        h = self.encoder(x)
        return {name: head(h) for name, head in self.heads.items()}


model = DDP(MultiTask(64, TASKS))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(5):
    x = torch.randn(8, 40)
    out = model(x)
    loss = sum(nn.functional.cross_entropy(out[t], torch.randint(0, n, (8,))) for t, n in TASKS.items())
    opt.zero_grad()
    loss.backward()
    opt.step()
print(rank, "done", loss.item())
dist.destroy_process_group()
