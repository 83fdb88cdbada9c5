"""A spectral filter layer: rfft over 63 samples, multiply by a learned filter, irfft back without n=63;
irfft's default output length is 2 * (bins - 1) = 62, so the filtered signal is one sample short of the target."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F  # noqa: F401
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)



class SpectralFilter(torch.nn.Module):
    def __init__(self, length=63):
        super().__init__()
        self.filt = torch.nn.Parameter(torch.ones(length // 2 + 1))

    def forward(self, x):
        return torch.fft.irfft(torch.fft.rfft(x, dim=-1) * self.filt, dim=-1)


model = DDP(SpectralFilter())
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(3):
    sig = torch.randn(8, 63)
    target = sig - sig.mean(-1, keepdim=True)
    loss = ((model(sig) - target) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
