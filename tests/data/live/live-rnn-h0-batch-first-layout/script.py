"""A 2-layer LSTM language model with batch_first=True under DDP; the user builds the initial hidden state batch
first as well, (batch, num_layers, hidden), though batch_first does not apply to h0/c0."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
VOCAB, HIDDEN, LAYERS, BATCH, SEQ = 200, 64, 2, 8, 24


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HIDDEN)
        self.lstm = nn.LSTM(HIDDEN, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def init_hidden(self, batch):
        return (torch.zeros(batch, LAYERS, HIDDEN), torch.zeros(batch, LAYERS, HIDDEN))

    def forward(self, ids, hidden):
        y, hidden = self.lstm(self.emb(ids), hidden)
        return self.out(y), hidden


model = DDP(CharLM())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    ids = torch.randint(0, VOCAB, (BATCH, SEQ + 1))
    logits, _ = model(ids[:, :-1], model.module.init_hidden(BATCH))
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
