import os

import torch
import torch.distributed as dist
import torch.nn as nn

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
model = nn.Linear(32, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(64, 32, device="cuda")
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    # average the loss over ranks for logging
    logged = torch.tensor([loss.item()])
    dist.all_reduce(logged)
    print(f"step {step} loss {logged.item() / dist.get_world_size():.4f}", flush=True)
dist.destroy_process_group()
