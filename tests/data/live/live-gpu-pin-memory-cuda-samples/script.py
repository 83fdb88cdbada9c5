import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
# The whole dataset preloaded onto the GPU, then a loader with the pin_memory=True from a tutorial.
data = TensorDataset(torch.randn(2048, 16, device="cuda"), torch.randn(2048, 1, device="cuda"))
loader = DataLoader(data, batch_size=64, shuffle=True, pin_memory=True)
model = nn.Linear(16, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step, (x, y) in enumerate(loader):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
