"""A pruned fine-tune saved its state_dict with the pruning still attached (weight_orig/weight_mask, no prune.remove);
the evaluation script loads it into a plain model."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.utils.prune as prune
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


def make():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))


model = make()
for layer in (model[0], model[2]):
    prune.l1_unstructured(layer, name="weight", amount=0.3)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for _ in range(5):
    loss = ddp(torch.randn(16, 32)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    torch.save(ddp.module.state_dict(), "pruned.pt")
dist.barrier()

evaluator = make()
evaluator.load_state_dict(torch.load("pruned.pt", weights_only=True))
print(rank, "eval", evaluator(torch.randn(4, 32)).sum().item())
dist.destroy_process_group()
