"""The user took the FSDP2 tutorial (init_device_mesh("cuda", ...) and fully_shard) and runs it on a CPU-only node
with gloo: the mesh is still built on "cuda"."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
world = dist.get_world_size()
mesh = init_device_mesh("cuda", (world,))  # the mistake: no GPU on this node
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer, mesh=mesh)
fully_shard(model, mesh=mesh)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
