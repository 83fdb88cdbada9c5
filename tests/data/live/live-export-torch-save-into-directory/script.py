"""Export at the end of training: the user makes the export folder and passes the folder itself to torch.save,
meaning "save into it"."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

export_dir = "export"
os.makedirs(export_dir, exist_ok=True)
if rank == 0:
    torch.save(model.module.state_dict(), export_dir)
    print(f"saved weights to {export_dir}")
dist.barrier()
dist.destroy_process_group()
