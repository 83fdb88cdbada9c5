"""Per-sample standardisation (x - mean) / std over each row; padded rows are all zeros, so their std is 0 and 0 / 0
is NaN. The user debugs under torch.autograd.detect_anomaly(), which stops the backward at the NaN gradient."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = DDP(torch.nn.Sequential(torch.nn.Linear(24, 32), torch.nn.GELU(), torch.nn.Linear(32, 3)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)

for step in range(3):
    x = torch.randn(12, 24)
    x[-2:] = 0.0  # the batch is padded to 12 rows with zeros
    y = torch.randint(0, 3, (12,))
    with torch.autograd.detect_anomaly():
        x = (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
