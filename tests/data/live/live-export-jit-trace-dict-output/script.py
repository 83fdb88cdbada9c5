"""The model returns a dict of heads; the user exports it with torch.jit.trace for serving."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.cls = torch.nn.Linear(32, 3)
        self.reg = torch.nn.Linear(32, 1)

    def forward(self, x):
        h = self.trunk(x)
        return {"logits": self.cls(h), "score": self.reg(h)}


model = DDP(TwoHeads())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(3):
    loss = sum(v.pow(2).mean() for v in model(torch.randn(8, 16)).values())
    opt.zero_grad()
    loss.backward()
    opt.step()

if rank == 0:
    net = model.module.eval()
    traced = torch.jit.trace(net, torch.randn(1, 16))
    traced.save("model_traced.pt")
dist.barrier()
dist.destroy_process_group()
