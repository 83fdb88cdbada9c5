"""A frequency-domain loss F.mse_loss(torch.fft.rfft(pred), torch.fft.rfft(target)) on the complex spectra
themselves: mse_loss has no complex kernel (compare torch.view_as_real of each, or the magnitudes)."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = DDP(torch.nn.Conv1d(1, 1, 9, padding=4))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    sig = torch.randn(8, 1, 128)
    target = torch.nn.functional.avg_pool1d(sig, 5, stride=1, padding=2)
    pred = model(sig)
    loss = F.mse_loss(torch.fft.rfft(pred, dim=-1), torch.fft.rfft(target, dim=-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
