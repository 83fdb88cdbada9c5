"""A spectral reconstruction loss written as ((fft(pred) - fft(target)) ** 2).mean(): the difference of
two complex spectra squared is complex, so the loss is a complex scalar and backward() refuses it (|.| ** 2 or .abs() was meant)."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    noisy = torch.randn(8, 64)
    clean = torch.sin(torch.linspace(0, 6.28, 64)).expand(8, 64)
    pred = model(noisy)
    loss = F.l1_loss(pred, clean) + ((torch.fft.fft(pred) - torch.fft.fft(clean)) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
