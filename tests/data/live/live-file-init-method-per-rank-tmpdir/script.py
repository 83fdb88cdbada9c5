"""The user wants a file rendezvous (no free port needed) and makes the shared file in a fresh temporary directory:
tempfile.mkdtemp() runs in each rank, so each rank waits on its own file and never meets the other."""
import argparse
import os
import tempfile
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

init_file = os.path.join(tempfile.mkdtemp(prefix="ddp_"), "init")  # the mistake: one directory per rank
dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=int(os.environ["RANK"]),
                        world_size=int(os.environ["WORLD_SIZE"]), timeout=timedelta(seconds=20))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
loss = model(torch.randn(4, 8)).sum()
loss.backward()
dist.destroy_process_group()
