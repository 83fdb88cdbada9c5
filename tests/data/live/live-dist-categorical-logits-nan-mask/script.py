"""Policy over a variable action set: invalid actions are masked by multiplying the logits with the mask by -inf."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributions import Categorical
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

policy = DDP(nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 6)))
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(10):
    obs = torch.randn(16, 10)
    valid = torch.rand(16, 6) > 0.3
    valid[:, 0] = True
    logits = policy(obs)
    masked = logits + (~valid).float() * float("-inf")  # 0 * -inf for the valid actions
    pi = Categorical(logits=masked)
    action = pi.sample()
    loss = -(pi.log_prob(action) * torch.randn(16)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(rank, step, loss.item())
dist.destroy_process_group()
