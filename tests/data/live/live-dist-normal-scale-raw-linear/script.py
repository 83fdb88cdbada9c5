"""Gaussian policy for continuous control: the policy head gives mean and std, the std taken straight from a Linear."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributions import Normal
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 64), nn.Tanh())
        self.mu = nn.Linear(64, 2)
        self.std = nn.Linear(64, 2)

    def forward(self, obs):
        h = self.body(obs)
        return self.mu(h), self.std(h)


policy = DDP(Policy())
opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
for step in range(10):
    obs = torch.randn(32, 8)
    mu, std = policy(obs)
    pi = Normal(mu, std)
    action = pi.sample()
    reward = -(action ** 2).sum(-1)
    loss = -(pi.log_prob(action).sum(-1) * (reward - reward.mean())).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(rank, step, loss.item())
dist.destroy_process_group()
