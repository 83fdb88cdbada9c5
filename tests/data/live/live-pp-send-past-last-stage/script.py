"""A hand-written pipeline where every stage sends its output to rank + 1; the last stage should compute
the loss instead, but the send is not guarded, so the last rank sends to rank 2 in a world of 2."""
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
hidden = 32
stage = torch.nn.Linear(hidden, hidden)
for step in range(3):
    if rank == 0:
        x = torch.randn(4, hidden)
    else:
        x = torch.empty(4, hidden)
        dist.recv(x, src=rank - 1)
    out = torch.relu(stage(x)).detach()
    dist.send(out, dst=rank + 1)  # the mistake: also on the last stage
    print(f"rank {rank} step {step} sent {tuple(out.shape)}")
dist.destroy_process_group()
