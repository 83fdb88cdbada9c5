import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class OnGpu(Dataset):
    """Puts each sample on the GPU in __getitem__ to "save a copy later"."""

    def __len__(self):
        return 1024

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(16, generator=g).cuda(), torch.randn(1, generator=g).cuda()


local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
loader = DataLoader(OnGpu(), batch_size=64, num_workers=2)
for step, (x, y) in enumerate(loader):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
