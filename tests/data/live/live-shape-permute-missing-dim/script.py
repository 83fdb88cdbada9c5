"""Images come from the loader as (B, H, W, C) and the script converts them to channels-first with x.permute(0, 3, 1) — the ordering names three of the four dimensions (permute(0, 3, 1, 2))."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = x.permute(0, 3, 1)  # the mistake: NHWC to NCHW needs all four axes, permute(0, 3, 1, 2)
        x = F.relu(self.conv(x))
        return self.fc(x.mean(dim=(2, 3)))


model = DDP(SmallCNN())
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for _step in range(3):
    images = torch.rand(8, 32, 32, 3)  # HWC images, as PIL/numpy give them
    labels = torch.randint(0, 10, (8,))
    loss = F.cross_entropy(model(images), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
