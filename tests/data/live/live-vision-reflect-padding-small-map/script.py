"""An image-to-image network (style-transfer style: every convolution with padding_mode="reflect") trained under DDP
on 16x16 crops: three stride-2 downsamplings leave a 2x2 bottleneck, and its 5x5 convolution's reflect padding of 2
needs a map larger than the padding."""
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


class Photos(Dataset):
    def __init__(self, files, n_classes=10):
        self.files, self.n_classes = files, n_classes

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = np.array(Image.open(self.files[i]).convert("RGB"), dtype=np.float32) / 255.0
        return torch.from_numpy(img).permute(2, 0, 1).contiguous(), i % self.n_classes


def conv(cin, cout, k, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, padding_mode="reflect"), nn.ReLU())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(conv(3, 16, 3, 2), conv(16, 32, 3, 2), conv(32, 64, 3, 2))
        self.bottleneck = conv(64, 64, 5)
        self.up = nn.Sequential(nn.Upsample(scale_factor=8, mode="nearest"), nn.Conv2d(64, 3, 3, padding=1))

    def forward(self, x):
        return self.up(self.bottleneck(self.down(x)))


root, files = write_pngs(32, (16, 16))
ds = Photos(files)
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=8, sampler=sampler)
model = DDP(Net())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for step, (x, _) in enumerate(loader):
        loss = nn.functional.l1_loss(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0 and step % 2 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
