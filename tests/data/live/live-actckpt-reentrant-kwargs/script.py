"""A small transformer-style encoder under DDP whose blocks run under torch.utils.checkpoint the reentrant way, the
attention mask passed by keyword as in the block's own call (use_reentrant=True does not accept keyword arguments)."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.ff = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))
        self.n1 = torch.nn.LayerNorm(d)
        self.n2 = torch.nn.LayerNorm(d)

    def forward(self, x, attn_mask=None):
        h = self.n1(x)
        x = x + self.attn(h, h, h, key_padding_mask=attn_mask, need_weights=False)[0]
        return x + self.ff(self.n2(x))


class Encoder(torch.nn.Module):
    def __init__(self, vocab=100, d=32, layers=4):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(layers))
        self.head = torch.nn.Linear(d, 2)

    def forward(self, ids, pad_mask):
        x = self.emb(ids)
        for blk in self.blocks:
            x = checkpoint(blk, x, attn_mask=pad_mask, use_reentrant=True)
        return self.head(x.mean(1))


model = DDP(Encoder())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    ids = torch.randint(1, 100, (8, 16))
    pad_mask = torch.zeros(8, 16, dtype=torch.bool)
    pad_mask[:, 12:] = True
    loss = torch.nn.functional.cross_entropy(model(ids, pad_mask), torch.randint(0, 2, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
