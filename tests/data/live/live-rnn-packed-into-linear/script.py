"""A per-token tagger (POS tagging) with a packed LSTM under DDP: the LSTM's output, still a PackedSequence, is given
to the per-token Linear without pad_packed_sequence."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pack_padded_sequence

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
TAGS = 12


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(500, 32, padding_idx=0)
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.tag = nn.Linear(64, TAGS)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.emb(ids), lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        return self.tag(out)


model = DDP(Tagger())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    lengths = torch.randint(4, 30, (8,))
    ids = torch.randint(1, 500, (8, 30))
    tags = torch.randint(0, TAGS, (8, 30))
    tags[torch.arange(30)[None, :] >= lengths[:, None]] = -100
    logits = model(ids, lengths)
    loss = nn.functional.cross_entropy(logits.reshape(-1, TAGS), tags.reshape(-1), ignore_index=-100)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
