"""Variable-length sensor sequences under DDP: the dataset has a few empty recordings (length 0), padded like the
others and packed with their lengths; the collate function never drops them."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)

g = torch.Generator().manual_seed(1)
recordings = [torch.randn(int(n), 6, generator=g) for n in torch.randint(0, 30, (64,), generator=g)]
targets = torch.randn(64, 1, generator=g)


def collate(batch):
    seqs, ys = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    return pad_sequence(list(seqs), batch_first=True), lengths, torch.stack(ys)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(6, 32, batch_first=True)
        self.out = nn.Linear(32, 1)

    def forward(self, x, lengths):
        _, h = self.rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
        return self.out(h[-1])


data = list(zip(recordings, targets))
loader = DataLoader(data, batch_size=16, sampler=DistributedSampler(data, shuffle=False), collate_fn=collate)
model = DDP(Regressor())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for x, lengths, y in loader:
    loss = nn.functional.mse_loss(model(x, lengths), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
