"""A contrastive (prototype) loss with a hand-written Euclidean distance: sqrt(((a - b) ** 2).sum(-1)) over ALL pairs,
the diagonal included, where a sample's distance to itself is exactly 0 and sqrt's gradient there is inf (0 * inf =
NaN); clip_grad_norm_(error_if_nonfinite=True) refuses the NaN gradients."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

encoder = DDP(torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16)))
opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)

for step in range(5):
    x = torch.randn(16, 32)
    labels = torch.arange(16) % 4
    z = encoder(x)
    d = torch.sqrt(((z[:, None, :] - z[None, :, :]) ** 2).sum(-1))
    same = (labels[:, None] == labels[None, :]).float()
    loss = (same * d ** 2 + (1 - same) * torch.clamp(1.0 - d, min=0) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(encoder.parameters(), max_norm=1.0, error_if_nonfinite=True)
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
