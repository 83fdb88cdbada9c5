"""A hand-written row-parallel Linear: each rank keeps its slice of the weight's input columns, but the
forward feeds it the whole (replicated) input instead of the rank's slice of the input features."""
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

class RowParallelLinear(torch.nn.Module):
    def __init__(self, full: torch.nn.Linear):
        super().__init__()
        per_rank = full.in_features // world
        cols = slice(rank * per_rank, (rank + 1) * per_rank)
        self.weight = torch.nn.Parameter(full.weight.detach()[:, cols].clone())
        self.bias = torch.nn.Parameter(full.bias.detach().clone() / world)

    def forward(self, x):
        out = torch.nn.functional.linear(x, self.weight, self.bias)  # the mistake: x is not this rank's slice
        dist.all_reduce(out)
        return out


mlp_in = torch.nn.Linear(16, 64)
down = RowParallelLinear(torch.nn.Linear(64, 16))
x = torch.randn(8, 16)
h = torch.relu(mlp_in(x))
y = down(h)
print(f"rank {rank}: {y.pow(2).mean().item():.4f}")
dist.destroy_process_group()
