import os

import torch
import torch.distributed as dist
import torch.nn as nn

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 10)).cuda().to(torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cuda")  # kept from the fp16 recipe
for step in range(3):
    x = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    y = torch.randint(0, 10, (64,), device="cuda")
    loss = nn.functional.cross_entropy(model(x).float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
