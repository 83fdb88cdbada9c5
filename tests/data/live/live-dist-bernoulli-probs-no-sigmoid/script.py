"""A binarised-MNIST style VAE: the decoder's output is used as Bernoulli probs (the sigmoid was left out of it)."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributions import Bernoulli, Normal
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(64, 2 * 8)
        self.dec = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 64))

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        z = Normal(mu, (0.5 * logvar).exp()).rsample()
        return self.dec(z), mu, logvar


model = DDP(VAE())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(10):
    x = (torch.rand(32, 64) > 0.5).float()
    probs, mu, logvar = model(x)
    recon = -Bernoulli(probs=probs).log_prob(x).sum(-1).mean()
    kl = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(-1).mean()
    loss = recon + kl
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(rank, step, loss.item())
dist.destroy_process_group()
