"""The user shards a list of 38 samples by hand (samples[rank::world]) into batches of 4 and accumulates 4
micro-batches per step under no_sync, stepping also on the last batch of the epoch so the tail is not lost. Rank 0
gets 5 batches and rank 1 gets 4 (the empty texts filtered out after sharding all fall in rank 1's shard), so the ranks
reach the synchronizing backward a different number of times."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

ACCUM = 4
dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
samples = [(torch.randn(16), torch.randn(1), "" if i in (31, 33, 35, 37) else "text") for i in range(38)]
mine = [s for s in samples[rank::world] if s[2]]  # drop empty texts after sharding: uneven shards
batches = [mine[i:i + 4] for i in range(0, len(mine), 4)]
print(f"rank {rank}: {len(mine)} samples, {len(batches)} batches", flush=True)
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(2):
    for i, batch in enumerate(batches):
        x = torch.stack([b[0] for b in batch])
        y = torch.stack([b[1] for b in batch])
        boundary = (i + 1) % ACCUM == 0 or i == len(batches) - 1
        if boundary:
            loss = torch.nn.functional.mse_loss(model(x), y) / ACCUM
            loss.backward()
            opt.step()
            opt.zero_grad()
        else:
            with model.no_sync():
                loss = torch.nn.functional.mse_loss(model(x), y) / ACCUM
                loss.backward()
    print(f"rank {rank}: epoch {epoch} done", flush=True)
dist.destroy_process_group()
