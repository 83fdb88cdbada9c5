"""The user wraps the model in FullyShardedDataParallel (FSDP1) on a CPU-only node with gloo, as they would on a GPU
box, without device_id: FSDP1 picks the accelerator and finds none."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
model = FSDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))  # the mistake
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
