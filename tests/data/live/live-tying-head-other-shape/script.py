"""A small LM whose embedding is narrower (32) than its hidden size (64), with an up-projection after the embedding;
the user ties the output layer Linear(64, vocab) to the (vocab, 32) token embedding as in GPT-2."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
VOCAB, EMB, HIDDEN = 1000, 32, 64


class FactorizedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.up = nn.Linear(EMB, HIDDEN)
        self.block = nn.TransformerEncoderLayer(HIDDEN, 4, 128, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.head.weight = self.embed.weight  # weight tying, as in GPT-2

    def forward(self, ids):
        return self.head(self.block(self.up(self.embed(ids))))


model = DDP(FactorizedLM())
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for step in range(5):
    ids = torch.randint(0, VOCAB, (4, 16))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if rank == 0:
        print(f"step {step} loss {loss.item():.3f}")
dist.destroy_process_group()
