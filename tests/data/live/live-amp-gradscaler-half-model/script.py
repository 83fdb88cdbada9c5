"""fp16 mixed precision on CPU with torch.amp: the model is cast with model.half() "to halve its memory" and then
trained with torch.autocast(cpu, float16) and a torch.amp.GradScaler("cpu"), so the parameters the scaler must
unscale are themselves float16."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)

net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1)).half()
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
scaler = torch.amp.GradScaler("cpu")
for step in range(5):
    x = torch.randn(16, 32)
    y = torch.randn(16, 1)
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        pred = model(x.half())
    loss = nn.functional.mse_loss(pred.float(), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
