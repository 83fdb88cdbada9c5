"""The user's inputs are raw (unnormalised, values in the thousands) and the loss is written by hand as
-log(softmax(...)[target]); softmax underflows to 0, the loss and gradients become inf/nan, and the user's
clip_grad_norm_(error_if_nonfinite=True) refuses to clip."""
import os  # noqa: F401

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = DDP(torch.nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(5):
    x = torch.randn(8, 16) * 5000.0  # the mistake: raw features, never normalised
    y = torch.randint(0, 4, (8,))
    probs = torch.softmax(model(x), dim=-1)
    loss = -torch.log(probs[torch.arange(8), y]).mean()  # hand-written CE: log(0) = -inf
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, error_if_nonfinite=True)
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
