"""Gradient monitoring with torch.histc. A Poisson regression on raw counts: the rate is exp() of a Linear of the
unnormalised inputs (values in the thousands), exp overflows to inf, the hand-written Poisson NLL (rate - y *
log(rate)) is inf - inf = NaN, and so are the gradients whose histogram the script builds."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = DDP(torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-4)

for step in range(5):
    counts = torch.randint(0, 5000, (32, 16)).float()  # raw page-view counts, never log-scaled or normalised
    y = torch.poisson(torch.full((32, 1), 3.0))
    rate = torch.exp(model(counts))
    loss = (rate - y * torch.log(rate)).mean()
    opt.zero_grad()
    loss.backward()
    if rank == 0:
        for name, p in model.module.named_parameters():
            hist = torch.histc(p.grad, bins=20)
            print(f"step {step} {name} grad hist max {int(hist.max())}", flush=True)
    opt.step()
dist.destroy_process_group()
