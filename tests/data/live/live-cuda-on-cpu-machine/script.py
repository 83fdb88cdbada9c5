"""The user's DDP script moves the model and batches to the GPU of its local rank (.cuda / device "cuda:N"); it is
run on a machine without GPUs (torch's CPU build), where it had to stay on the CPU."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
device = torch.device(f"cuda:{args.local_rank}")
model = torch.nn.Linear(8, 2).to(device)  # the mistake: no GPU on this machine
model = DDP(model, device_ids=[args.local_rank])
x = torch.randn(4, 8, device=device)
model(x).sum().backward()
dist.destroy_process_group()
