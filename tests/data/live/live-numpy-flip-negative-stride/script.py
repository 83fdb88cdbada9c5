"""An image classifier under DDP whose Dataset augments with numpy: a random horizontal flip as np.flip (or x[:, ::-1])
returns a view with a negative stride, and the DataLoader's default collate (torch.as_tensor) refuses it."""
import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class Shapes(Dataset):
    def __init__(self, n=256):
        rng = np.random.default_rng(0)
        self.images = rng.random((n, 3, 16, 16), dtype=np.float32)
        self.labels = rng.integers(0, 4, n)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i]
        if np.random.rand() < 0.5:
            img = np.flip(img, axis=2)  # horizontal flip
        return img, int(self.labels[i])


ds = Shapes()
loader = DataLoader(ds, batch_size=16, sampler=DistributedSampler(ds), num_workers=2)
model = DDP(torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(8, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step, (xb, yb) in enumerate(loader):
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0 and step % 4 == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
