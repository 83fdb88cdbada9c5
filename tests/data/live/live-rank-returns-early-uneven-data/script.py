"""The user shards the data by hand and the shards are uneven: rank 1 gets fewer batches, leaves its loop early and
exits cleanly, while rank 0 goes on training and waits in DDP's gradient all_reduce for a peer that is gone. They set
a short process-group timeout while debugging."""
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
samples = list(range(103))
shard = samples[rank * 60:(rank + 1) * 60]  # 60 samples on rank 0, 43 on rank 1
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _batch_start in range(0, len(shard), 4):
    loss = model(torch.randn(4, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"rank {rank} finished its shard")
dist.destroy_process_group()
