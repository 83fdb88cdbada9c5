"""EMA (mean teacher) under DDP: the EMA copy is a deepcopy of the plain model, and its in-place update runs without
torch.no_grad() (the copy's parameters still require grad)."""
import copy

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
ema = copy.deepcopy(net).eval()
model = DDP(net)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def update_ema(ema_model, live_model, decay=0.999):
    for pe, p in zip(ema_model.parameters(), live_model.parameters()):
        pe.mul_(decay).add_(p.detach(), alpha=1 - decay)  # the mistake: no torch.no_grad()


for step in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    update_ema(ema, model.module)
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
