"""To load a checkpoint fast the model is built under torch.device("meta") and the weights are loaded with
load_state_dict(..., assign=True); the rotary embedding's inv_freq is a persistent=False buffer, so the checkpoint
does not hold it and it stays a meta tensor."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x):
        t = torch.arange(x.shape[1], dtype=torch.float32)
        freqs = torch.outer(t, self.inv_freq)
        cos, sin = freqs.cos(), freqs.sin()
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


class TinyLM(nn.Module):
    def __init__(self, vocab=200, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rotary = Rotary(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids):
        h = self.rotary(self.embed(ids))
        return self.lm_head(h + self.mlp(h))


if rank == 0 and not os.path.exists("pretrained.pt"):
    torch.save(TinyLM().state_dict(), "pretrained.pt")
dist.barrier()

with torch.device("meta"):
    model = TinyLM()
model.load_state_dict(torch.load("pretrained.pt"), assign=True)
model = DDP(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(5):
    ids = torch.randint(0, 200, (4, 16))
    logits = model(ids)
    loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 200), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print(rank, "done", loss.item())
dist.destroy_process_group()
