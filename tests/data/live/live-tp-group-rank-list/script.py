"""The user passes the list of the tensor-parallel group's ranks as group= to all_reduce, instead of the
ProcessGroup that dist.new_group returns for that list."""
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
tp_ranks = list(range(world))
dist.new_group(tp_ranks)  # the ProcessGroup it returns is thrown away
full = torch.nn.Linear(32, 16)
local_in = full.in_features // world
w = full.weight.detach()[:, rank * local_in:(rank + 1) * local_in]
x = torch.randn(4, full.in_features)
partial = x[:, rank * local_in:(rank + 1) * local_in] @ w.t()
dist.all_reduce(partial, group=tp_ranks)  # the mistake: a list of ranks, not a ProcessGroup
print(f"rank {rank}: {partial.sum().item():.4f}")
dist.destroy_process_group()
