"""Linear probing under DDP on CPU: a frozen convolutional backbone is cast to bfloat16 to save memory and time
(backbone.to(torch.bfloat16)), and only the float32 linear probe is trained; the image batches are float32 and go
to the bfloat16 backbone as they are."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)

backbone = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
).to(torch.bfloat16).eval()
for p in backbone.parameters():
    p.requires_grad_(False)
probe = DDP(nn.Linear(32, 10))
opt = torch.optim.SGD(probe.parameters(), lr=0.1)
for step in range(5):
    images = torch.rand(8, 3, 32, 32)
    labels = torch.randint(0, 10, (8,))
    with torch.no_grad():
        feats = backbone(images).float()
    loss = nn.functional.cross_entropy(probe(feats), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
