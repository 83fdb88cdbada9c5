"""Layer-wise learning rates: the user builds one group per top-level block from named_parameters() and keeps the
names in the group's list instead of the parameters."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32))
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


model = Net()
lrs = {"encoder": 1e-4, "head": 1e-3}
groups = []
for block, lr in lrs.items():
    names = [n for n, _p in model.named_parameters() if n.startswith(block + ".")]
    groups.append({"params": names, "lr": lr})
opt = torch.optim.AdamW(groups, weight_decay=0.01)
model = DDP(model)
for _step in range(10):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
