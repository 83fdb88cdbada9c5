"""After pruning the weights the user makes the pruning permanent with prune.remove on every parameter of each layer,
bias included, which was never pruned."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.utils.prune as prune
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
layers = [m for m in model.modules() if isinstance(m, nn.Linear)]
prune.global_unstructured([(m, "weight") for m in layers], pruning_method=prune.L1Unstructured, amount=0.4)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for _ in range(5):
    loss = ddp(torch.randn(16, 32)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
for m in layers:
    for name in ("weight", "bias"):
        prune.remove(m, name)
if rank == 0:
    torch.save(model.state_dict(), "pruned_final.pt")
dist.destroy_process_group()
