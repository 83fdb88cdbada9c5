"""The user trained under DDP, saved ddp_model.state_dict(), and now loads it into the plain model to evaluate."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
ddp_model = torch.nn.parallel.DistributedDataParallel(model)
path = f"weights_rank{rank}.pt"
torch.save(ddp_model.state_dict(), path)  # keys: module.0.weight, ...
eval_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
eval_model.load_state_dict(torch.load(path))
print("loaded", os.path.getsize(path))
dist.destroy_process_group()
