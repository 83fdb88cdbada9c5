"""Token dropping for speed: each checkpointed block keeps a random subset of the tokens, drawn with Python's random
module, under torch.utils.checkpoint(use_reentrant=False). Checkpoint replays torch's RNG on recomputation, not
Python's, so the block recomputed in backward keeps another number of tokens."""
import os
import random
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.checkpoint import checkpoint

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
random.seed(1234 + rank)


class Block(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.ff = torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                      torch.nn.Linear(4 * d, d))

    def forward(self, x):
        keep = random.randint(x.shape[1] // 2, x.shape[1])  # keep a random number of tokens
        x = x[:, :keep]
        return x + self.ff(x)


class Net(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.emb = torch.nn.Linear(8, d)
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(3))
        self.head = torch.nn.Linear(d, 1)

    def forward(self, x):
        h = self.emb(x)
        for blk in self.blocks:
            h = checkpoint(blk, h, use_reentrant=False)
        return self.head(h.mean(1))


model = DDP(Net())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    x, y = torch.randn(4, 64, 8), torch.randn(4, 1)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
