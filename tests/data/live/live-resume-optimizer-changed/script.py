"""The user switched the optimizer from Adam to SGD with momentum for the rest of training and resumes from
last.pt, which the first run (Adam, setup.py) saved with the optimizer's state."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
ckpt = torch.load("last.pt", map_location="cpu")
model.load_state_dict(ckpt["model"])
model = DDP(model)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
optimizer.load_state_dict(ckpt["optimizer"])
for _step in range(ckpt["step"], 10):
    optimizer.zero_grad()
    model(torch.randn(2, 16)).pow(2).mean().backward()
    optimizer.step()
dist.destroy_process_group()
