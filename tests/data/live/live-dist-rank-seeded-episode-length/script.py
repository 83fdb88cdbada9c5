"""Policy-gradient RL under DDP: each rank seeds its own generator (seed + rank, for diverse rollouts) and the episode
length is drawn from a Geometric distribution; every step of the episode does its own DDP backward."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributions import Categorical, Geometric
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(1234 + rank)

policy = DDP(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2)))
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for episode in range(5):
    length = 1 + int(Geometric(probs=torch.tensor(0.2)).sample())
    print(rank, "episode", episode, "length", length, flush=True)
    for _ in range(length):
        obs = torch.randn(1, 4)
        pi = Categorical(logits=policy(obs))
        action = pi.sample()
        loss = -(pi.log_prob(action) * float(action == 1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
dist.destroy_process_group()
