"""The user evaluates on rank 0 only (to print one validation number) and, inside that `if rank == 0:`, averages the
validation loss with all_reduce, a collective the other ranks never call. They set a short process-group timeout
while debugging, so the hang ends."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    for _ in range(5):
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:  # the mistake: the collective below runs on rank 0 only
        with torch.no_grad():
            val = torch.nn.functional.mse_loss(model.module(torch.randn(64, 8)), torch.randn(64, 1))
        dist.all_reduce(val)
        print(f"epoch {epoch}: val loss {val.item() / dist.get_world_size():.4f}")
    else:
        # the other ranks wait for rank 0 at the end of the epoch, as the user thought they would
        dist.barrier()
dist.destroy_process_group()
