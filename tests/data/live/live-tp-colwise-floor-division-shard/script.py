"""A hand-written column-parallel Linear: each rank keeps out_features // world rows of the weight. With
7 output features over 2 ranks each keeps 3 rows, the gathered output has 6 features and the next (replicated) Linear,
built for 7, gets the wrong width."""
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

class ColumnParallelLinear(torch.nn.Module):
    def __init__(self, full: torch.nn.Linear):
        super().__init__()
        per_rank = full.out_features // world  # the mistake: 7 // 2 = 3, one row is lost
        rows = slice(rank * per_rank, (rank + 1) * per_rank)
        self.weight = torch.nn.Parameter(full.weight.detach()[rows].clone())
        self.bias = torch.nn.Parameter(full.bias.detach()[rows].clone())

    def forward(self, x):
        local = torch.nn.functional.linear(x, self.weight, self.bias)
        parts = [torch.empty_like(local) for _ in range(world)]
        dist.all_gather(parts, local)
        return torch.cat(parts, dim=-1)


hidden, classes = 16, 7
fc1 = ColumnParallelLinear(torch.nn.Linear(hidden, classes))
head = torch.nn.Linear(classes, 3)
opt = torch.optim.SGD(list(fc1.parameters()) + list(head.parameters()), lr=0.1)
for step in range(5):
    x, y = torch.randn(8, hidden), torch.randint(0, 3, (8,))
    loss = torch.nn.functional.cross_entropy(head(torch.relu(fc1(x))), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {rank} step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
