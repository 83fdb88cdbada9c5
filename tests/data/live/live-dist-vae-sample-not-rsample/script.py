"""A VAE with KL annealing from beta = 0; the latent is drawn with .sample() instead of .rsample()."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(32, 2 * 4)
        self.decoder = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 32))

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=-1)
        q = Normal(mu, (0.5 * logvar).exp())
        z = q.sample()
        return self.decoder(z), q


model = DDP(VAE())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
prior = Normal(torch.zeros(4), torch.ones(4))
for step in range(10):
    beta = min(1.0, step / 1000)
    x = torch.randn(32, 32)
    recon, q = model(x)
    loss = F.mse_loss(recon, x)
    if beta > 0:
        loss = loss + beta * kl_divergence(q, prior).sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(rank, step, loss.item())
dist.destroy_process_group()
