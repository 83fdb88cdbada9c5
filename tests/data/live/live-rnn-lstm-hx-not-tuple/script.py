"""The encoder was a GRU and became an LSTM; the training step still passes one initial hidden tensor, where an LSTM
takes the pair (h0, c0)."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(10, 48, num_layers=2, batch_first=True)  # was nn.GRU(10, 48, num_layers=2, ...)
        self.head = nn.Linear(48, 2)

    def forward(self, x, h0):
        y, _ = self.rnn(x, h0)
        return self.head(y[:, -1])


model = DDP(Encoder())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    x = torch.randn(8, 12, 10)
    h0 = torch.zeros(2, 8, 48)
    loss = nn.functional.cross_entropy(model(x, h0), torch.randint(0, 2, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
