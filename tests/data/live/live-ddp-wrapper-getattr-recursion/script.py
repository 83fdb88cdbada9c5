"""The user wraps their model in a small nn.Module that forwards unknown attributes to the inner model with
__getattr__ (to reach model.config through the wrapper). nn.Module keeps submodules in self._modules, not in the
instance dict, so `self.model` inside __getattr__ calls __getattr__ again: endless recursion."""
from datetime import timedelta

import torch
import torch.distributed as dist


class Wrapper(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def __getattr__(self, name):  # the mistake: does not try nn.Module's own lookup first
        return getattr(self.model, name)

    def forward(self, x):
        return self.model(x)


dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.parallel.DistributedDataParallel(Wrapper(torch.nn.Linear(16, 1)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _step in range(3):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
