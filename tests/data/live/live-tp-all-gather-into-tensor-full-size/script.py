"""A column-parallel Linear's weight shards are reassembled for a checkpoint with all_gather_into_tensor,
but the output buffer is allocated as world_size times the full weight (the user multiplied the already full size by
the world size) instead of the full weight's shape."""
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
out_features, in_features = 64, 32
full = torch.nn.Linear(in_features, out_features)
shard = full.weight.detach().chunk(world, dim=0)[rank].contiguous()
gathered = torch.empty(world * out_features, in_features)  # the mistake: out_features is already the full size
dist.all_gather_into_tensor(gathered, shard)
if rank == 0:
    torch.save({"weight": gathered}, "tp_weight.pt")
print(f"rank {rank}: gathered {tuple(gathered.shape)}")
dist.destroy_process_group()
