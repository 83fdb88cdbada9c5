"""REINFORCE on a discrete action space, written from a continuous-action (SAC-style) template that used rsample."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributions import Categorical
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

policy = DDP(nn.Sequential(nn.Linear(6, 64), nn.ReLU(), nn.Linear(64, 4)))
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(10):
    obs = torch.randn(16, 6)
    pi = Categorical(logits=policy(obs))
    action = pi.rsample()
    reward = (action == 2).float()
    loss = -(pi.log_prob(action) * reward).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(rank, step, loss.item())
dist.destroy_process_group()
