"""The user's first run: DDP training with Adam, saving model and optimizer to last.pt (run once with torchrun,
2 ranks)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for _step in range(2):
    optimizer.zero_grad()
    model(torch.randn(2, 16)).pow(2).mean().backward()
    optimizer.step()
if dist.get_rank() == 0:
    torch.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "step": 2}, "last.pt")
dist.destroy_process_group()
