"""The user debugs a loss that goes wrong by dropping a breakpoint() into the training loop on rank 0 (as they would
in a single-process run) and launches the job as usual; a launched rank has no terminal for pdb to read from."""
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
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(20):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    if step == 3 and rank == 0:
        breakpoint()  # the mistake: an interactive debugger in a launched rank
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
