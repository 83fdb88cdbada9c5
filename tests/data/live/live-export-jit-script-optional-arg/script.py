"""The model's forward takes an optional padding mask (mask=None, no type annotation); the user scripts it."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class Pooler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 32)
        self.out = torch.nn.Linear(32, 2)

    def forward(self, x, mask=None):
        h = torch.relu(self.proj(x))
        if mask is not None:
            h = h * mask.unsqueeze(-1)
        return self.out(h.mean(dim=1))


model = DDP(Pooler())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    loss = model(torch.randn(4, 6, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

if rank == 0:
    scripted = torch.jit.script(model.module)
    scripted.save("pooler_scripted.pt")
dist.barrier()
dist.destroy_process_group()
