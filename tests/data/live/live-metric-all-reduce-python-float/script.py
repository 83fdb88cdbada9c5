"""The user averages the validation loss over ranks; they accumulate it with loss.item() (a Python float, to free the
graph) and pass that float to dist.all_reduce."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(5):
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

model.eval()
val_loss = 0.0
with torch.no_grad():
    for _ in range(4):
        val_loss += torch.nn.functional.mse_loss(model(torch.randn(16, 8)), torch.randn(16, 1)).item()
dist.all_reduce(val_loss)  # the mistake: a Python float, not a tensor
print(f"val loss {val_loss / dist.get_world_size() / 4:.4f}")
dist.destroy_process_group()
