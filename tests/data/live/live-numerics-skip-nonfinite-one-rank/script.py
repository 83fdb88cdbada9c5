"""A NaN guard that skips the step: `if not torch.isfinite(loss): continue` before backward. One sample of rank 1's
shard is corrupt (NaN), so rank 1 skips that backward while rank 0 runs it: DDP's gradient all-reduce on rank 0 has
no partner, and the ranks' collectives fall out of step. (The guard's decision was not all_reduced over ranks.)"""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)

g = torch.Generator().manual_seed(100 + rank)
data = torch.randn(64, 16, generator=g)
if rank == 1:
    data[37, 3] = float("nan")  # one corrupt sample in rank 1's shard
targets = torch.randn(64, 1, generator=g)

skipped = 0
for epoch in range(3):
    for i in range(0, 64, 8):
        x, y = data[i:i + 8], targets[i:i + 8]
        loss = torch.nn.functional.mse_loss(model(x), y)
        if not torch.isfinite(loss):
            skipped += 1
            print(f"rank {rank}: non-finite loss at batch {i // 8}, skipping step", flush=True)
            continue
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}", flush=True)
print(f"rank {rank} done, skipped {skipped}", flush=True)
dist.destroy_process_group()
