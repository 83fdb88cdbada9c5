"""A model whose output projection is stored as (hidden, vocab) (it is applied as h @ self.out.weight in the user's
old code): to tie it to the (vocab, hidden) embedding, the user assigns the embedding's transpose to the parameter."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
VOCAB, HIDDEN = 500, 48


class Projection(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(hidden, vocab) * 0.02)

    def forward(self, h):
        return h @ self.weight


class TinyLM(nn.Module):
    def __init__(self, tie=True):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.out = Projection(HIDDEN, VOCAB)
        if tie:
            self.out.weight = self.embed.weight.t()  # share the embedding, transposed to (hidden, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.out(h)


model = DDP(TinyLM(tie=True))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(0, VOCAB, (8, 20))
    loss = F.cross_entropy(model(ids[:, :-1]).reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if rank == 0:
        print(f"step {step} loss {loss.item():.3f}")
dist.destroy_process_group()
