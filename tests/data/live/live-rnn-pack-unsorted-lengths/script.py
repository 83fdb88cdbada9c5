"""A sentence classifier on padded token batches under DDP: the batch is packed with its true lengths, straight from
the shuffled loader (not sorted longest first), and pack_padded_sequence keeps its default enforce_sorted=True."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pack_padded_sequence

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self, vocab=100, emb=16, hidden=32, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.LSTM(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.emb(ids), lengths, batch_first=True)
        _, (h, _) = self.rnn(packed)
        return self.head(h[-1])


model = DDP(Classifier())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(dist.get_rank())
for _ in range(3):
    lengths = torch.randint(3, 21, (8,), generator=g)
    ids = torch.randint(1, 100, (8, 20), generator=g)
    ids[torch.arange(20)[None, :] >= lengths[:, None]] = 0
    labels = torch.randint(0, 3, (8,), generator=g)
    loss = nn.functional.cross_entropy(model(ids, lengths), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
