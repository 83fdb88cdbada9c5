"""A small GPT-style LM under DDP reads its token stream nanoGPT's way: rank 0 writes the corpus once as a flat
uint16 file (np.array(ids, dtype=np.uint16).tofile) with a meta.json giving the token count; then every rank opens
it with np.memmap, but with dtype=np.int64 (what the embedding wants) and shape=(n_tokens,), so numpy maps 4x the
file's bytes."""
import json
import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
os.makedirs("data", exist_ok=True)
if rank == 0:
    ids = np.random.default_rng(0).integers(0, 500, 20000)
    np.array(ids, dtype=np.uint16).tofile("data/train.bin")
    with open("data/meta.json", "w") as f:
        json.dump({"n_tokens": int(ids.size), "vocab_size": 500}, f)
dist.barrier()

meta = json.load(open("data/meta.json"))
data = np.memmap("data/train.bin", dtype=np.int64, mode="r", shape=(meta["n_tokens"],))


def get_batch(bs=8, block=32):
    ix = torch.randint(len(data) - block - 1, (bs,))
    x = torch.stack([torch.from_numpy(np.array(data[i:i + block])) for i in ix])
    y = torch.stack([torch.from_numpy(np.array(data[i + 1:i + 1 + block])) for i in ix])
    return x, y


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=500, d=32):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, d)
        self.rnn = torch.nn.GRU(d, d, batch_first=True)
        self.out = torch.nn.Linear(d, vocab)

    def forward(self, x):
        return self.out(self.rnn(self.emb(x))[0])


model = DDP(TinyLM(meta["vocab_size"]))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(10):
    x, y = get_batch()
    loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
