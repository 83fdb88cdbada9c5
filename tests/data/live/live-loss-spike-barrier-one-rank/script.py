"""The user guards against loss spikes: when a step's loss is above a threshold, every rank should stop at a barrier
and rank 0 writes a debug snapshot. But the loss compared is each rank's own (not all-reduced), so only the rank whose
batch spiked calls the barrier; the other goes on into DDP's gradient all_reduce. Short process-group timeout while
debugging."""
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
torch.manual_seed(rank)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
SPIKE = 5.0

for step in range(50):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    if rank == 1 and step == 7:
        y = y * 10  # an outlier batch lands on rank 1 only
    loss = torch.nn.functional.mse_loss(model(x), y)
    if loss.item() > SPIKE:  # the mistake: this rank's own loss decides whether to call a collective
        print(f"step {step}: loss spike {loss.item():.2f}, syncing for a debug snapshot")
        dist.barrier()
        if rank == 0:
            torch.save(model.state_dict(), "spike.pt")
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
