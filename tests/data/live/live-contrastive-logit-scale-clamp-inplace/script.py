"""CLIP-style training with a learnable temperature (logit_scale, a log scale) inside the model; the user clamps it to
ln(100) after each step, as CLIP does, but without torch.no_grad()."""
import math
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class Clip(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.image = torch.nn.Linear(32, 16)
        self.text = torch.nn.Linear(24, 16)
        self.logit_scale = torch.nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, images, texts):
        img = F.normalize(self.image(images), dim=-1)
        txt = F.normalize(self.text(texts), dim=-1)
        return self.logit_scale.exp() * img @ txt.t()


dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(Clip())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(100 + rank)
for step in range(20):
    logits = model(torch.randn(8, 32, generator=g), torch.randn(8, 24, generator=g))
    labels = torch.arange(8)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.module.logit_scale.clamp_(0, math.log(100))  # CLIP clamps the temperature
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
