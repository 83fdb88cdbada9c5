"""An older training script (written against numpy 1.19) under DDP builds its label-smoothing targets with
dtype=np.float; numpy 1.24 removed that alias of the builtin float, and numpy 2.x (installed here) has no np.float."""
import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
np.random.seed(rank)


def smooth_targets(labels, n_classes, eps=0.1):
    t = np.full((len(labels), n_classes), eps / n_classes, dtype=np.float)
    t[np.arange(len(labels)), labels] += 1.0 - eps
    return torch.from_numpy(t).float()


model = DDP(torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x = torch.randn(16, 10)
    labels = np.random.randint(0, 5, 16)
    loss = torch.nn.functional.cross_entropy(model(x), smooth_targets(labels, 5))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
