import os

import torch
import torch.distributed as dist
import torch.nn as nn

# A 10-class classifier trained on labels read from a CSV where classes are numbered 1..10.
local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")
num_classes = 10
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, num_classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
torch.manual_seed(1)
for step in range(5):
    x = torch.randn(256, 32, device="cuda")
    y = torch.randint(1, num_classes + 1, (256,), device="cuda")  # labels 1..10 as in the file
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.3f}", flush=True)
dist.destroy_process_group()
