"""The user passes rank and world size to init_process_group by hand, as a tutorial for one machine did; rank is
written as 0, so both processes claim rank 0."""
import argparse
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

dist.init_process_group("gloo", init_method="env://", world_size=2, rank=0,  # the mistake: rank=0 in every process
                        timeout=timedelta(seconds=20))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
loss = model(torch.randn(4, 8)).sum()
loss.backward()
dist.destroy_process_group()
