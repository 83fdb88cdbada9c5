"""EMA of a model with BatchNorm under DDP: the user averages over state_dict() (to include the running statistics),
so the loop also meets BatchNorm's num_batches_tracked, an integer buffer, and multiplies it in place by the float
decay."""
import copy

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
ema = copy.deepcopy(net).eval().requires_grad_(False)
model = DDP(net)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.no_grad()
def update_ema(ema_model, live_model, decay=0.999):
    live = live_model.state_dict()
    for name, v in ema_model.state_dict().items():
        v.mul_(decay).add_(live[name], alpha=1 - decay)


for step in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    update_ema(ema, model.module)
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
