"""Without torchvision, the Dataset's transform only resizes with PIL (img.resize) and returns the PIL image itself:
nothing converts it to a tensor (torchvision's ToTensor, or torch.from_numpy(np.array(img))), and the DataLoader's
default collate cannot batch PIL images."""
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
    def __init__(self, files, size=(32, 32)):
        self.files, self.size = files, size

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(self.files[i]).convert("RGB").resize(self.size, Image.Resampling.BILINEAR)
        return img, i % 10


root, files = write_pngs(32, (40, 36))
ds = Photos(files)
sampler = DistributedSampler(ds)
loader = DataLoader(ds, batch_size=8, sampler=sampler)
net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                    nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))

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

