"""The user wraps the model in DistributedDataParallel, thinking the launcher sets up torch.distributed for them; the
script never calls init_process_group."""
import argparse
import os

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
model = DDP(model)  # the mistake: no dist.init_process_group() before it
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(10):
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
