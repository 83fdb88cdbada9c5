"""A text classifier trained under DDP on CPU with bf16 autocast: only the encoder's call is inside the
torch.autocast block; the classification head is applied after the block, on the encoder's bfloat16 output,
with its float32 weights."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, vocab=500, d=64, classes=4):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, d, mode="mean")
        self.encoder = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d))
        self.head = nn.Linear(d, classes)

    def forward(self, tokens):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            h = self.encoder(self.embed(tokens))
        return self.head(h)  # head kept out of autocast "for numerical stability"


model = DDP(Classifier())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    tokens = torch.randint(0, 500, (8, 20))
    labels = torch.randint(0, 4, (8,))
    loss = nn.functional.cross_entropy(model(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
