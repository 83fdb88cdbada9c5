"""A small video classifier under DDP samples 8 evenly spaced frames of each 30-frame clip with
torch.linspace(0, T - 1, 8) and indexes the clip with it directly (linspace returns floats)."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

NUM_FRAMES = 8
dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
g = torch.Generator().manual_seed(rank)


class FrameAvg(nn.Module):
    def __init__(self, classes=6):
        super().__init__()
        self.frame = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(16, classes)

    def forward(self, clips):  # [B, T, C, H, W]
        B, T = clips.shape[:2]
        return self.head(self.frame(clips.flatten(0, 1)).view(B, T, -1).mean(1))


model = DDP(FrameAvg())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(5):
    clips = torch.randn(4, 30, 3, 32, 32, generator=g)
    labels = torch.randint(0, 6, (4,), generator=g)
    frame_idx = torch.linspace(0, clips.size(1) - 1, NUM_FRAMES)
    sampled = clips[:, frame_idx]
    loss = nn.functional.cross_entropy(model(sampled), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
