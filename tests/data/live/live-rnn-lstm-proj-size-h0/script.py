"""An LSTM with a projection (proj_size=16, hidden_size=64) under DDP; the initial state is built as two
(num_layers, batch, hidden_size) tensors, where h0 must have proj_size features and only c0 hidden_size."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
HIDDEN, PROJ, LAYERS = 64, 16, 2


class AcousticModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(40, HIDDEN, num_layers=LAYERS, proj_size=PROJ, batch_first=True)
        self.out = nn.Linear(PROJ, 30)

    def forward(self, feats):
        b = feats.size(0)
        state = (torch.zeros(LAYERS, b, HIDDEN), torch.zeros(LAYERS, b, HIDDEN))
        y, _ = self.lstm(feats, state)
        return self.out(y)


model = DDP(AcousticModel())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    feats = torch.randn(8, 50, 40)
    labels = torch.randint(0, 30, (8, 50))
    loss = nn.functional.cross_entropy(model(feats).reshape(-1, 30), labels.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
