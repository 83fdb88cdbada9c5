import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
device = torch.device("cuda", local_rank)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
data = TensorDataset(torch.randn(512, 16), torch.randn(512, 1))
loader = DataLoader(data, batch_size=32)
opt = torch.optim.Adam(model.parameters())
for step, (x, y) in enumerate(loader):
    loss = nn.functional.mse_loss(model(x), y)  # the batch is still on the CPU
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
