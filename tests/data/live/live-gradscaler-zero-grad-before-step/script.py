"""The user moved optimizer.zero_grad(set_to_none=True) to 'just before the step' while adding GradScaler for
bf16 autocast on CPU, so scaler.step finds no gradients."""
import os  # noqa: F401

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = DDP(torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
for step in range(5):
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    opt.zero_grad(set_to_none=True)  # the mistake: clears the gradients backward just made
    scaler.step(opt)
    scaler.update()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
