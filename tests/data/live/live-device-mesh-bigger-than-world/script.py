"""The user copied a 2-D (data parallel x tensor parallel) recipe written for a 4-GPU box: the mesh shape (2, 2) is
hard-coded, but the job runs 2 processes, so the mesh asks for 4 ranks of a world of 2."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))  # the mistake: 4 ranks, the world is 2
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
model = parallelize_module(model, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
print(model(torch.randn(4, 16)).sum())
dist.destroy_process_group()
