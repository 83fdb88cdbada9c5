"""A captioning decoder trained under DDP on CPU in bfloat16 (decoder.to(torch.bfloat16)), cross-attending to the
features of a frozen image encoder kept in float32: the encoder's features are used directly as the keys and
values of F.scaled_dot_product_attention, next to the decoder's bfloat16 queries."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
D, H = 64, 4


class Decoder(nn.Module):
    def __init__(self, vocab=1000):
        super().__init__()
        self.embed = nn.Embedding(vocab, D)
        self.q = nn.Linear(D, D)
        self.out = nn.Linear(D, vocab)

    def forward(self, ids, memory):
        b, t = ids.shape
        q = self.q(self.embed(ids)).view(b, t, H, D // H).transpose(1, 2)
        kv = memory.view(b, -1, H, D // H).transpose(1, 2)  # the encoder's features as keys and values
        a = F.scaled_dot_product_attention(q, kv, kv)
        return self.out(a.transpose(1, 2).reshape(b, t, D))


encoder = nn.Sequential(nn.Conv2d(3, D, 8, stride=8), nn.Flatten(2)).eval()  # frozen, float32
for p in encoder.parameters():
    p.requires_grad_(False)
decoder = DDP(Decoder().to(torch.bfloat16))
opt = torch.optim.AdamW(decoder.parameters(), lr=1e-3)
for step in range(5):
    images = torch.randn(4, 3, 32, 32)
    ids = torch.randint(0, 1000, (4, 12))
    with torch.no_grad():
        memory = encoder(images).transpose(1, 2)  # (b, 16, D) float32
    logits = decoder(ids[:, :-1], memory)
    loss = F.cross_entropy(logits.float().reshape(-1, 1000), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
