"""The user averages a per-rank metric tensor across ranks. They meant each rank to hold the same-shaped vector of
per-sample losses, but each rank's last batch is a different size (its data shard has a different length), so the
ranks call all_reduce with tensors of different shapes."""
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
rank = dist.get_rank()

data = torch.randn(10 + 3 * rank, 4)  # each rank's shard: 10 and 13 samples
model = torch.nn.Linear(4, 1)
with torch.no_grad():
    per_sample = (model(data).squeeze(-1) ** 2)  # one loss per sample on this rank
dist.all_reduce(per_sample, op=dist.ReduceOp.SUM)  # the mistake: shapes [10] and [13]
print(f"rank {rank}: mean loss {per_sample.mean().item() / dist.get_world_size():.4f}")
dist.destroy_process_group()
