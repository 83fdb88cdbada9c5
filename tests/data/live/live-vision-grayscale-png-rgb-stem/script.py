"""Fine-tuning an RGB-stem CNN (Conv2d(3, ...)) under DDP on a folder of scanned documents saved as grayscale ("L")
PNGs; the Dataset opens them with PIL without .convert("RGB"), so each image has one channel."""
import os
import tempfile
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from PIL import Image
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


def write_pngs(n, size, mode="RGB"):
    """The image folder: n small PNGs (a stand-in for the photos on disk)."""
    root = tempfile.mkdtemp(prefix=f"imgs{rank}-")
    rng = np.random.default_rng(0)
    for i in range(n):
        shape = (size[1], size[0], 3) if mode == "RGB" else (size[1], size[0])
        Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8)).convert(mode).save(f"{root}/{i:04d}.png")
    return root, [f"{root}/{i:04d}.png" for i in range(n)]


class Scans(Dataset):
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(self.files[i])
        x = torch.from_numpy(np.array(img, dtype=np.float32) / 255.0)
        x = x.unsqueeze(0) if x.ndim == 2 else x.permute(2, 0, 1)
        return (x - 0.5) / 0.25, i % 4


root, files = write_pngs(32, (48, 48), mode="L")
ds = Scans(files)
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=8, sampler=sampler)
net = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                    nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 4))

model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0 and step % 2 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()

