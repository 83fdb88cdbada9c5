"""Token tagging under DDP: the collate function pads each batch to its own longest sentence, but the loss mask of
real tokens is built with the dataset's configured max_len (48) columns, and the logits are selected with it."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

MAX_LEN = 48
NUM_TAGS = 9
dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
g = torch.Generator().manual_seed(0)
data = [(torch.randint(1, 500, (n,), generator=g), torch.randint(0, NUM_TAGS, (n,), generator=g))
        for n in torch.randint(5, 30, (64,), generator=g).tolist()]


def collate(items):
    longest = max(len(t) for t, _ in items)
    ids = torch.zeros(len(items), longest, dtype=torch.long)
    tags = torch.zeros(len(items), longest, dtype=torch.long)
    lengths = torch.tensor([len(t) for t, _ in items])
    for i, (t, y) in enumerate(items):
        ids[i, :len(t)] = t
        tags[i, :len(t)] = y
    return ids, tags, lengths


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(500, 64, padding_idx=0)
        self.lstm = nn.LSTM(64, 64, batch_first=True, bidirectional=True)
        self.out = nn.Linear(128, NUM_TAGS)

    def forward(self, ids):
        return self.out(self.lstm(self.emb(ids))[0])


model = DDP(Tagger())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data), collate_fn=collate)
for ids, tags, lengths in loader:
    logits = model(ids)
    mask = torch.arange(MAX_LEN)[None, :] < lengths[:, None]  # real tokens
    loss = nn.functional.cross_entropy(logits[mask], tags[mask])
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
