"""The user's cluster guide says to use MPI for CPU jobs, so the script asks torch.distributed for the mpi backend;
the pip wheel of torch is not built with MPI."""
import argparse

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

dist.init_process_group(backend="mpi")  # the mistake: this torch has no MPI
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
loss = model(torch.randn(4, 8)).sum()
loss.backward()
dist.destroy_process_group()
