"""A VAE whose Normal prior was swapped for a heavy-tailed Student-t prior, keeping the closed-form KL call."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, StudentT, kl_divergence
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(20, 16)
        self.dec = nn.Linear(8, 20)

    def forward(self, x):
        loc, log_s = self.enc(x).chunk(2, dim=-1)
        q = Normal(loc, log_s.exp())
        return self.dec(q.rsample()), q


model = DDP(VAE())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
prior = StudentT(3.0, torch.zeros(8), torch.ones(8))
for step in range(10):
    x = torch.randn(32, 20)
    recon, q = model(x)
    kl = kl_divergence(q, prior).sum(-1).mean()
    loss = F.mse_loss(recon, x) + kl
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(rank, step, loss.item())
dist.destroy_process_group()
