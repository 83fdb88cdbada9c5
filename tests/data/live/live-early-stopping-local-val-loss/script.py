"""The user adds early stopping: stop when the validation loss has not improved for `patience` epochs. Each rank
validates on its own shard and decides by itself (no all_reduce of the validation loss), so rank 0 stops and leaves
training while rank 1 trains on. Short process-group timeout while debugging."""
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
torch.manual_seed(0)
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
g = torch.Generator().manual_seed(100 + rank)  # each rank's own validation shard
val_x, val_y = torch.randn(64, 8, generator=g), torch.randn(64, 1, generator=g) * (1 + 3 * rank)
best, bad, patience = float("inf"), 0, 2

for epoch in range(20):
    for _ in range(5):
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        val = torch.nn.functional.mse_loss(model.module(val_x), val_y).item()
    print(f"epoch {epoch}: val {val:.4f}")
    if val < best - 1e-3:
        best, bad = val, 0
    else:
        bad += 1
    if bad >= patience or (rank == 0 and epoch == 3):  # rank 0's shard plateaus first
        print(f"early stopping at epoch {epoch}")
        break  # the mistake: this rank alone leaves the training loop
if rank == 0:
    torch.save(model.module.state_dict(), "final.pt")
