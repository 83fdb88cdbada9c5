"""The user shards a list of files by hand (files[rank::world]) and each rank trains on its own shard. 7 files over 2
ranks gives rank 0 four and rank 1 three, so rank 1 finishes its loop one file early and waits at the final barrier
while rank 0 is still in DDP's gradient all_reduce. No DistributedSampler, no Join. Short process-group timeout."""
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
rank, world = dist.get_rank(), dist.get_world_size()
files = [f"shard-{i:03d}" for i in range(7)]
mine = files[rank::world]  # the mistake: uneven shards, one rank gets one batch fewer
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for name in mine:
    g = torch.Generator().manual_seed(hash(name) % 1000)
    x, y = torch.randn(32, 8, generator=g), torch.randn(32, 1, generator=g)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {rank} {name}: loss {loss.item():.4f}")
dist.barrier()  # wait for everyone before saving
if rank == 0:
    torch.save(model.module.state_dict(), "model.pt")
dist.destroy_process_group()
