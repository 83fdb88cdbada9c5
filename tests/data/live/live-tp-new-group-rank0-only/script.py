"""The user creates the tensor-parallel group inside the rank-0 set-up block (next to the logging and the
output directory); dist.new_group must be called by every rank of the world, so rank 0 waits in it for rank 1, which
goes on to the first all_reduce. Short process-group timeout while debugging."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
tp_group = None
if rank == 0:
    os.makedirs("out", exist_ok=True)
    print("tensor parallel over", world, "ranks")
    tp_group = dist.new_group(list(range(world)))  # the mistake: only rank 0 calls it

layer = torch.nn.Linear(32, 32 // world)
out = layer(torch.randn(4, 32))
parts = [torch.empty_like(out) for _ in range(world)]
dist.all_gather(parts, out, group=tp_group)
print(f"rank {rank}: {torch.cat(parts, -1).shape}")
dist.destroy_process_group()
