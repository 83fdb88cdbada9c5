"""A language model with a large vocabulary trained under DDP on CPU: to save memory the user casts only the
embedding table to bfloat16 (model.embed.to(torch.bfloat16)); the LSTM and the output layer stay float32, so the
LSTM is fed the embedding's bfloat16 output."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
VOCAB = 20000


class LSTMLM(nn.Module):
    def __init__(self, vocab=VOCAB, d=64, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids):
        h, _ = self.rnn(self.embed(ids))
        return self.out(h)


lm = LSTMLM()
lm.embed.to(torch.bfloat16)  # the 20000 x 64 table is the biggest tensor: keep it in bf16
model = DDP(lm)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(0, VOCAB, (4, 33))
    logits = model(ids[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
