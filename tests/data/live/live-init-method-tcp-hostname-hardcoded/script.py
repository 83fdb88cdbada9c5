"""Written for the user's two-node cluster: the rendezvous address is hard-coded as tcp:// to the head node's host
name (node001), which this machine cannot resolve; rank and world size come from the launcher."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

dist.init_process_group("gloo", init_method="tcp://node001:23456",  # the mistake: another cluster's head node
                        rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]),
                        timeout=timedelta(seconds=20))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
loss = model(torch.randn(4, 8)).sum()
loss.backward()
dist.destroy_process_group()
