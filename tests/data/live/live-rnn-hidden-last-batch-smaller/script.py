"""Stateful GRU forecasting under DDP: the hidden state is carried (detached) from batch to batch through an epoch,
but the DataLoader keeps its last, smaller batch (drop_last=False), so the carried state no longer fits it."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)

series = torch.randn(100, 16, 4)  # 100 windows of 16 steps, 4 features
target = torch.randn(100, 16, 1)
data = TensorDataset(series, target)
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data, shuffle=False))  # 50 per rank: 16,16,16,2


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 32, batch_first=True)
        self.out = nn.Linear(32, 1)

    def forward(self, x, h):
        y, h = self.gru(x, h)
        return self.out(y), h


model = DDP(Forecaster())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _epoch in range(2):
    h = None
    for x, y in loader:
        pred, h = model(x, h)
        h = h.detach()
        loss = nn.functional.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
dist.destroy_process_group()
