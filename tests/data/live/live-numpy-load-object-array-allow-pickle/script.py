"""A text classifier under DDP caches its tokenized corpus: rank 0 saves the token-id arrays of sentences of
different lengths with np.save (numpy stores a ragged list as an object array, pickled inside the .npy); every rank
then reads the cache with np.load's defaults (allow_pickle=False)."""
import os
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pad_sequence

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])
torch.manual_seed(0)
os.makedirs("cache", exist_ok=True)
if rank == 0:
    rng = np.random.default_rng(0)
    docs = np.empty(200, dtype=object)
    for i in range(200):
        docs[i] = rng.integers(1, 300, rng.integers(5, 40)).astype(np.int64)
    np.save("cache/tokens.npy", docs)
    np.save("cache/labels.npy", rng.integers(0, 2, 200))
dist.barrier()

tokens = np.load("cache/tokens.npy")
labels = np.load("cache/labels.npy")
shard = range(rank, len(tokens), dist.get_world_size())


class BagClassifier(torch.nn.Module):
    def __init__(self, vocab=300, d=32):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(vocab, d, padding_idx=0)
        self.head = torch.nn.Linear(d, 2)

    def forward(self, ids):
        return self.head(self.emb(ids))


model = DDP(BagClassifier())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
idx = list(shard)
for start in range(0, len(idx), 16):
    batch = idx[start:start + 16]
    ids = pad_sequence([torch.from_numpy(tokens[i]) for i in batch], batch_first=True)
    loss = torch.nn.functional.cross_entropy(model(ids), torch.from_numpy(labels[batch]))
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print(f"loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
