"""A ResNet-style classifier under DDP whose head is nn.AdaptiveAvgPool2d(1) then nn.Linear(512, 10), with the
flatten left out: the pooled features stay (N, 512, 1, 1), and Linear multiplies their last dimension (1)."""
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


def res_stage(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        self.body = nn.Sequential(res_stage(64, 128), res_stage(128, 256), res_stage(256, 512))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, 10)

    def forward(self, x):
        return self.fc(self.pool(self.body(self.stem(x))))


root, files = write_pngs(32, (32, 32))
ds = Photos(files)
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=8, sampler=sampler)
net = Net()

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

