"""The user builds weight-decay / no-decay groups by name and collects each group's parameters in a set, to be sure no
parameter is listed twice; torch.optim wants an ordered collection (a list)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
model = DDP(model)
decay, no_decay = set(), set()
for name, p in model.named_parameters():
    if name.endswith("bias") or p.ndim == 1:
        no_decay.add(p)
    else:
        decay.add(p)
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                         {"params": no_decay, "weight_decay": 0.0}], lr=1e-3)
for _step in range(10):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
if int(os.environ.get("RANK", 0)) == 0:
    print("done", loss.item())
dist.destroy_process_group()
