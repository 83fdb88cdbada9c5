"""A hand-written attention-pooling classifier under DDP: the padding is masked out of the attention scores with
masked_fill, given the tokenizer-style int64 attention_mask (1 = real token, 0 = pad) turned around as 1 - mask, not a
bool tensor."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
g = torch.Generator().manual_seed(rank)


class AttnPool(nn.Module):
    def __init__(self, vocab=1000, d=64, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.score = nn.Linear(d, 1)
        self.out = nn.Linear(d, classes)

    def forward(self, input_ids, attention_mask):
        h = self.emb(input_ids)                      # [B, T, d]
        scores = self.score(h).squeeze(-1)           # [B, T]
        scores = scores.masked_fill(1 - attention_mask, float("-inf"))
        weights = scores.softmax(-1).unsqueeze(-1)
        return self.out((weights * h).sum(1))


model = DDP(AttnPool())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(10):
    lengths = torch.randint(4, 24, (16,), generator=g)
    attention_mask = (torch.arange(24)[None, :] < lengths[:, None]).long()
    input_ids = torch.randint(1, 1000, (16, 24), generator=g) * attention_mask
    labels = torch.randint(0, 4, (16,), generator=g)
    loss = nn.functional.cross_entropy(model(input_ids, attention_mask), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
