"""A batch_first GRU on (batch, seq, features) padded batches under DDP; pack_padded_sequence is called without
batch_first=True, so it reads the padded tensor as (seq, batch, features)."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pack_padded_sequence

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)


class SpeakerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(40, 64, batch_first=True)
        self.cls = nn.Linear(64, 10)

    def forward(self, feats, lengths):
        _, h = self.gru(pack_padded_sequence(feats, lengths, enforce_sorted=False))
        return self.cls(h[-1])


model = DDP(SpeakerNet())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(3):
    lengths = torch.randint(20, 50, (8,))
    feats = torch.randn(8, 50, 40)  # (batch, frames, mel bins), padded to 50 frames
    loss = nn.functional.cross_entropy(model(feats, lengths), torch.randint(0, 10, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
