"""Rank 0 saves the best weights at the end of each epoch and every rank reloads them right away to go on from the
best model; no barrier between the save and the load, so rank 1 reads the file while rank 0 is still writing it."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 256)))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
best = "best.pt"
for _epoch in range(3):
    optimizer.zero_grad()
    model(torch.randn(8, 256)).pow(2).mean().backward()
    optimizer.step()
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), best)
    model.module.load_state_dict(torch.load(best, map_location="cpu"))
dist.destroy_process_group()
