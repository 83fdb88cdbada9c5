"""The user builds one tensor-parallel group per block of tp_size ranks in a loop (every rank must call
new_group for every group) but keeps the last group made, not the one holding its own rank. With tp_size=1 on 2
ranks the groups are [0] and [1]; rank 0 keeps [1], a group it is not in, and get_world_size(tp_group) returns -1."""
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
tp_size = 1
tp_group = None
for start in range(0, world, tp_size):
    tp_group = dist.new_group(list(range(start, start + tp_size)))  # the mistake: kept whatever the rank

tp_world = dist.get_world_size(tp_group)
tp_rank = dist.get_rank(tp_group)
full = torch.nn.Linear(32, 64)
shard = torch.chunk(full.weight.detach(), tp_world, dim=0)[tp_rank]
print(f"rank {rank}: tp rank {tp_rank} of {tp_world}, weight shard {tuple(shard.shape)}")
layer = torch.nn.Linear(32, shard.shape[0])
with torch.no_grad():
    layer.weight.copy_(shard)
out = layer(torch.randn(4, 32))
dist.all_reduce(out, group=tp_group)
print(out.sum().item())
dist.destroy_process_group()
