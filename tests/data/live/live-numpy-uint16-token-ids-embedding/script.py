"""A small LM under DDP over a pre-tokenized corpus stored as uint16 (np.fromfile of a nanoGPT-style train.bin); the
batches are sliced from it with torch.from_numpy, which keeps uint16, without nanoGPT's .astype(np.int64), and
nn.Embedding takes only Long or Int indices."""
import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(rank)
os.makedirs("data", exist_ok=True)
if rank == 0:
    np.random.default_rng(0).integers(0, 1000, 50000).astype(np.uint16).tofile("data/train.bin")
dist.barrier()
data = np.fromfile("data/train.bin", dtype=np.uint16)


def get_batch(bs=8, block=64):
    ix = torch.randint(len(data) - block - 1, (bs,)).tolist()
    x = torch.stack([torch.from_numpy(data[i:i + block]) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + block]) for i in ix])
    return x, y


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=1000, d=48):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.mix = torch.nn.Linear(d, d)
        self.out = torch.nn.Linear(d, vocab)

    def forward(self, x):
        return self.out(torch.relu(self.mix(self.emb(x))))


model = DDP(TinyLM())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(10):
    x, y = get_batch()
    loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.long().flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
