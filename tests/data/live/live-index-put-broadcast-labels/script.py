"""Online hard-example mining under DDP: the per-sample loss is picked with logp[torch.arange(B), y] where the labels
were read as a [B, 1] column, so the pick silently broadcasts to [B, B]; the mean trains on it, and the write into the
per-sample loss bank fails two lines later."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
g = torch.Generator().manual_seed(0)
N = 256
features = torch.randn(N, 32, generator=g)
targets = torch.randint(0, 10, (N, 1), generator=g)  # one label column, as read from the table
dataset = TensorDataset(torch.arange(N), features, targets)
loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset, seed=0))

model = DDP(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_bank = torch.zeros(N)  # last loss of every sample, to oversample the hard ones next epoch
for idx, x, y in loader:
    logp = model(x).log_softmax(-1)
    per_sample = -logp[torch.arange(len(idx)), y]
    loss = per_sample.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    loss_bank[idx] = per_sample.detach()
dist.destroy_process_group()
