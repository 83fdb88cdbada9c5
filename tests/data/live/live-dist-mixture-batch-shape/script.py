"""A mixture density network: K mixture weights per sample, K Gaussian components of D dimensions per sample."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributions import Categorical, MixtureSameFamily, Normal
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

K, D = 5, 3


class MDN(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 64), nn.Tanh())
        self.pi = nn.Linear(64, K)
        self.mu = nn.Linear(64, K * D)
        self.log_sigma = nn.Linear(64, K * D)

    def forward(self, x):
        h = self.body(x)
        mu = self.mu(h).view(-1, K, D)
        sigma = self.log_sigma(h).view(-1, K, D).exp()
        mix = Categorical(logits=self.pi(h))
        comp = Normal(mu, sigma)  # batch_shape (B, K, D): the D dims were meant as one event
        return MixtureSameFamily(mix, comp)


model = DDP(MDN())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(10):
    x, y = torch.randn(32, 4), torch.randn(32, D)
    nll = -model(x).log_prob(y).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    print(rank, step, nll.item())
dist.destroy_process_group()
