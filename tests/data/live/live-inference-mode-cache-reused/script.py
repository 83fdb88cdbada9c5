"""The user's model caches its sinusoidal position table the first time forward runs. They run a quick sanity
evaluation under torch.inference_mode() before training, so the cache is an inference tensor, which the training
steps then reuse."""
import math
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Model(torch.nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        self.head = torch.nn.Linear(dim, 1)
        self.pos = None  # built lazily on the first forward

    def forward(self, x):
        if self.pos is None:
            t = torch.arange(x.shape[1]).unsqueeze(1) / 10000 ** (torch.arange(x.shape[2]) / x.shape[2])
            self.pos = torch.sin(t * math.pi)
        return self.head(self.proj(x) * self.pos).mean(1)


dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
model = DDP(Model())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

model.eval()
with torch.inference_mode():  # the mistake: the cache is first built here, as an inference tensor
    print(f"sanity val loss {torch.nn.functional.mse_loss(model(torch.randn(4, 8, 16)), torch.randn(4, 1)).item():.4f}")
model.train()
for _ in range(5):
    loss = torch.nn.functional.mse_loss(model(torch.randn(4, 8, 16)), torch.randn(4, 1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
