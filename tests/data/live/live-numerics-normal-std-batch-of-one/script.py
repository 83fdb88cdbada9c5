"""Gaussian policy under DDP: the exploration scale is the std of the batch's features, and the global batch of 2
is split over 2 ranks, so each rank's std is over ONE sample (NaN with Bessel's correction)."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)

GLOBAL_BATCH = 2
policy = DDP(torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 2)))
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)

for step in range(3):
    obs = torch.randn(GLOBAL_BATCH // world, 8)
    mu = policy(obs)
    scale = mu.detach().std(dim=0, keepdim=True).expand_as(mu) + 1e-3  # spread of the batch's actions
    dist_ = torch.distributions.Normal(mu, scale)
    action = dist_.sample()
    reward = -(action ** 2).sum(-1)
    loss = -(dist_.log_prob(action).sum(-1) * reward).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
