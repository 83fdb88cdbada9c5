"""The user's loss has a 'std' term written as sqrt(mean(x^2) - mean(x)^2), which goes slightly negative in float32;
they turned on torch.autograd.set_detect_anomaly to find where the NaN loss came from."""
import os  # noqa: F401

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

torch.autograd.set_detect_anomaly(True)
model = DDP(torch.nn.Linear(16, 16))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(8, 16)
    out = model(x)
    const = out.detach().mean() + 0 * out  # a nearly-constant feature map
    var = (const ** 2).mean() - const.mean() ** 2 - 1e-7  # the mistake: the variance formula can go negative
    loss = torch.nn.functional.mse_loss(out, x) + 0.1 * torch.sqrt(var)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
