"""A sentiment classifier switched to a bidirectional LSTM under DDP; the classification head still takes hidden_size
features, while a bidirectional LSTM's output has 2 * hidden_size."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
HIDDEN = 32


class Sentiment(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(1000, 50)
        self.lstm = nn.LSTM(50, HIDDEN, batch_first=True, bidirectional=True)
        self.head = nn.Linear(HIDDEN, 2)

    def forward(self, ids):
        out, _ = self.lstm(self.emb(ids))
        return self.head(out[:, -1, :])


model = DDP(Sentiment())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    ids = torch.randint(0, 1000, (8, 40))
    loss = nn.functional.cross_entropy(model(ids), torch.randint(0, 2, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
