"""A learned position table of max_len 128 rows is added to the token embeddings with self.pos.weight.expand(B, T, D): expand only repeats size-1 axes, and the table's 128 rows are not the batch's 24 positions (pos(torch.arange(T)) or weight[:T])."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab=100, dim=32, max_len=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.block = nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, ids):
        B, T = ids.shape
        x = self.tok(ids) + self.pos.weight.expand(B, T, -1)  # the mistake: (128, 32) cannot expand to (B, 24, 32)
        return self.lm_head(self.block(x))


model = DDP(TinyLM())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(3):
    ids = torch.randint(0, 100, (4, 25))
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 100), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
