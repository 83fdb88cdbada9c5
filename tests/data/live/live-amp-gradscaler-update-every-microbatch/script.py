"""fp16 autocast on CPU with a torch.amp.GradScaler and gradient accumulation over 4 micro-batches: the optimizer
steps (scaler.step) only every 4th micro-batch, but scaler.update() is called after every micro-batch's
backward."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
ACCUM = 4

model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")
for micro in range(12):
    x = torch.randn(8, 32)
    y = torch.randint(0, 10, (8,))
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        loss = nn.functional.cross_entropy(model(x), y) / ACCUM
    scaler.scale(loss).backward()
    if (micro + 1) % ACCUM == 0:
        scaler.step(opt)
        opt.zero_grad()
    scaler.update()
    if rank == 0:
        print(f"micro {micro} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
