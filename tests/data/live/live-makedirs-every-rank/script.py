"""Every rank creates the run's output directory with os.makedirs (no exist_ok, no rank check); the user meant one
output directory for the run, created once."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
out_dir = os.path.join("outputs", "exp1")
os.makedirs(out_dir)
model = DDP(torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), os.path.join(out_dir, "model.pt"))
dist.destroy_process_group()
