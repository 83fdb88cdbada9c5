"""The user tensor-parallelizes an MLP with parallelize_module and gives ColwiseParallel to both linear layers (the
second should be RowwiseParallel): the first layer's output is a local shard, which the second layer's
ColwiseParallel takes as a whole replicated input, so the matmul's sizes do not meet."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
mesh = init_device_mesh("cpu", (dist.get_world_size(),))
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16))
model = parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": ColwiseParallel()})  # the mistake: "2" Rowwise
opt = torch.optim.SGD(model.parameters(), lr=0.01)
torch.manual_seed(0)
x = torch.randn(8, 16)
loss = model(x).pow(2).mean()
loss.backward()
opt.step()
dist.destroy_process_group()
