"""torch.utils.checkpoint.checkpoint_sequential over the whole model, which is the user's own nn.Module (layers kept
in a ModuleList inside it), not an nn.Sequential or a list of modules."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint_sequential

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class DeepMLP(torch.nn.Module):
    def __init__(self, d=64, depth=8):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU())
                                          for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


trunk = DeepMLP()
head = torch.nn.Linear(64, 10)
model = DDP(torch.nn.ModuleDict({"trunk": trunk, "head": head}))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(5):
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    h = checkpoint_sequential(model.module["trunk"], 4, x, use_reentrant=False)
    loss = torch.nn.functional.cross_entropy(model.module["head"](h), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
