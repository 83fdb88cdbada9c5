"""Whitening the features with a Cholesky factor of their covariance, estimated from each rank's batch of 16 samples
in 64 dimensions: the covariance has rank <= 15, so it is not positive-definite, and no jitter (eps * I) was added."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(rank)

model = DDP(torch.nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def whiten(x: torch.Tensor) -> torch.Tensor:
    xc = x - x.mean(0, keepdim=True)
    cov = xc.T @ xc / (x.shape[0] - 1)
    L = torch.linalg.cholesky(cov)
    return torch.linalg.solve_triangular(L, xc.T, upper=False).T


for step in range(3):
    x = torch.randn(16, 64)
    y = torch.randint(0, 10, (16,))
    loss = torch.nn.functional.cross_entropy(model(whiten(x)), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
