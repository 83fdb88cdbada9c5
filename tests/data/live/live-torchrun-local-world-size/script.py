"""A script written for torchrun: it divides the node's batch by LOCAL_WORLD_SIZE, which torchrun sets. The
DeepSpeed-style launcher sets LOCAL_RANK, RANK, WORLD_SIZE and LOCAL_SIZE, not LOCAL_WORLD_SIZE."""
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
parser.add_argument("--node_batch_size", type=int, default=64)
args = parser.parse_args()

local_world_size = int(os.environ["LOCAL_WORLD_SIZE"])  # the mistake: torchrun's variable
per_rank_batch = args.node_batch_size // local_world_size
dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
loss = model(torch.randn(per_rank_batch, 8)).sum()
loss.backward()
dist.destroy_process_group()
