"""A small U-Net for segmentation trained under DDP on 60x60 tiles: 60 -> 30 -> 15 -> 7 after three MaxPool2d(2)
(floor), and upsampling 7 by 2 gives 14, which torch.cat cannot join to the 15x15 skip connection (U-Net needs a side
divisible by 2**depth, or cropping/padding of the skip)."""
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


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, c=8, n_classes=3):
        super().__init__()
        self.enc = nn.ModuleList([block(3, c), block(c, 2 * c), block(2 * c, 4 * c)])
        self.mid = block(4 * c, 8 * c)
        self.ups = nn.ModuleList([nn.ConvTranspose2d(8 * c, 4 * c, 2, stride=2),
                                  nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2),
                                  nn.ConvTranspose2d(2 * c, c, 2, stride=2)])
        self.dec = nn.ModuleList([block(8 * c, 4 * c), block(4 * c, 2 * c), block(2 * c, c)])
        self.out = nn.Conv2d(c, n_classes, 1)

    def forward(self, x):
        skips = []
        for enc in self.enc:
            x = enc(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.mid(x)
        for up, dec, skip in zip(self.ups, self.dec, reversed(skips)):
            x = dec(torch.cat([up(x), skip], dim=1))
        return self.out(x)


class Tiles(Dataset):
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = np.array(Image.open(self.files[i]).convert("RGB"), dtype=np.float32) / 255.0
        x = torch.from_numpy(img).permute(2, 0, 1).contiguous()
        mask = (x.mean(0) * 3).long().clamp(max=2)
        return x, mask


root, files = write_pngs(16, (60, 60))
ds = Tiles(files)
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=4, sampler=sampler)
net = UNet()

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

