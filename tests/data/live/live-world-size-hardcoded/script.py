"""A script written for the user's 8-GPU node: it takes its rank from the launcher but hard-codes world_size=8 in
init_process_group. Launched with 2 processes, rank 0's store waits for 8 ranks that never come."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

WORLD_SIZE = 8  # one node of 8 GPUs
dist.init_process_group("gloo", rank=int(os.environ["RANK"]), world_size=WORLD_SIZE,  # the mistake
                        timeout=timedelta(seconds=20))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
loss = model(torch.randn(4, 8)).sum()
loss.backward()
dist.destroy_process_group()
