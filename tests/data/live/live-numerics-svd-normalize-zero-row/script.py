"""Monitoring representation collapse (the embeddings' effective rank, from their singular values). The embeddings
are L2-normalised by hand, z / z.norm(dim=1, keepdim=True), with no eps: the batch's padded rows give all-zero
embeddings (a bias-free encoder), 0 / 0 is NaN, and the SVD of a matrix holding NaN cannot converge."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

encoder = DDP(torch.nn.Sequential(torch.nn.Linear(32, 64, bias=False), torch.nn.ReLU(),
                                  torch.nn.Linear(64, 16, bias=False)))
opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)


def effective_rank(z: torch.Tensor) -> float:
    s = torch.linalg.svdvals(z)
    p = s / s.sum()
    return float(torch.exp(-(p * torch.log(p + 1e-12)).sum()))


for step in range(3):
    x = torch.randn(24, 32)
    x[-4:] = 0.0  # padding rows to a fixed batch of 24
    z = encoder(x)
    z = z / z.norm(dim=1, keepdim=True)
    loss = -(z @ z.roll(1, 0).T).diagonal()[:-4].mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    erank = effective_rank(z.detach())
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f} effective rank {erank:.2f}", flush=True)
dist.destroy_process_group()
