"""A WGAN-GP style critic trained under DDP with its trunk under torch.utils.checkpoint(use_reentrant=True); the
gradient penalty takes the critic's gradient with respect to its input with torch.autograd.grad(create_graph=True)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.checkpoint import checkpoint

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(rank)


class Critic(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.trunk = torch.nn.Sequential(torch.nn.Linear(d, 64), torch.nn.LeakyReLU(0.2), torch.nn.Linear(64, 64),
                                         torch.nn.LeakyReLU(0.2))
        self.out = torch.nn.Linear(64, 1)

    def forward(self, x):
        return self.out(checkpoint(self.trunk, x, use_reentrant=True))


critic = Critic()
for p in critic.parameters():
    dist.broadcast(p.data, 0)
opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
for step in range(5):
    real = torch.randn(32, 16) + 1.0
    fake = torch.randn(32, 16)
    eps = torch.rand(32, 1)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    grad = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)[0]
    gp = ((grad.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic(fake).mean() - critic(real).mean() + 10.0 * gp
    opt.zero_grad()
    loss.backward()
    for p in critic.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
