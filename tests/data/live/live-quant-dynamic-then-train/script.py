"""The user dynamic-quantizes the model's Linear layers to int8 to save memory and then builds the optimizer and
trains it: quantize_dynamic replaces them with packed int8 weights that are not parameters."""
from datetime import timedelta

import torch
import torch.ao.quantization as tq
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2))
model = tq.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(10):
    x = torch.randn(16, 32)
    y = torch.randint(0, 2, (16,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(step, loss.item())
dist.destroy_process_group()
