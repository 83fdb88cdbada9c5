"""A hand-written two-stage pipeline: stage 0 runs the first half of the model and sends its activations
to stage 1. The first stage's output width was changed to 64, but stage 1 still allocates its receive buffer with the
old hidden size 32."""
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
micro_bs, d_in, hidden = 8, 16, 64
if rank == 0:
    stage = torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.ReLU())
else:
    stage = torch.nn.Sequential(torch.nn.Linear(hidden, 1))

for step in range(4):
    if rank == 0:
        act = stage(torch.randn(micro_bs, d_in)).detach()
        dist.send(act, dst=1)
    else:
        act = torch.empty(micro_bs, 32)  # the mistake: the old hidden size
        dist.recv(act, src=0)
        print(f"step {step}: loss {stage(act).pow(2).mean().item():.4f}")
dist.destroy_process_group()
