"""The model keeps its own EMA copy as an attribute (self.ema = copy.deepcopy(self.net)), so the EMA becomes a
registered submodule with trainable parameters that no forward uses; the whole model is wrapped in DDP."""
import copy

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class WithEMA(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
        self.ema = copy.deepcopy(self.net)  # the mistake: registered as a submodule, requires_grad left on
        self.decay = 0.99

    def forward(self, x):
        return self.net(x)

    @torch.no_grad()
    def update_ema(self):
        for pe, p in zip(self.ema.parameters(), self.net.parameters()):
            pe.mul_(self.decay).add_(p, alpha=1 - self.decay)


dist.init_process_group(backend="gloo")
torch.manual_seed(0)
model = DDP(WithEMA())
opt = torch.optim.AdamW(model.module.net.parameters(), lr=1e-3)
for step in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    model.module.update_ema()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
