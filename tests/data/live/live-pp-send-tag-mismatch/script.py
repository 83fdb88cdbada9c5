"""A hand-written two-stage pipeline tags each send with the micro-batch index, while the receiving stage
posts its recv with the step number as tag: from step 0's second micro-batch on the tags no longer agree and the
recv waits for a message that was sent under another tag. Short process-group timeout while debugging."""
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
n_micro, micro_bs, hidden = 4, 4, 32
first = torch.nn.Linear(hidden, hidden)
second = torch.nn.Linear(hidden, 1)
for step in range(3):
    for i in range(n_micro):
        if rank == 0:
            act = torch.relu(first(torch.randn(micro_bs, hidden))).detach()
            dist.send(act, dst=1, tag=i)
        else:
            act = torch.empty(micro_bs, hidden)
            dist.recv(act, src=0, tag=step)  # the mistake: meant tag=i
            print(f"step {step} micro {i}: {second(act).mean().item():.4f}")
dist.destroy_process_group()
