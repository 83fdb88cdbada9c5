"""The user's script, written for their GPU cluster, hard-codes backend="nccl"; they run it on a CPU-only machine
(a CI runner, a laptop) where only gloo can work."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="nccl")  # the mistake: NCCL on a machine without GPUs
rank = dist.get_rank()
model = DDP(torch.nn.Linear(8, 8))
x = torch.randn(4, 8)
model(x).sum().backward()
print(f"rank {rank} done")
dist.destroy_process_group()
