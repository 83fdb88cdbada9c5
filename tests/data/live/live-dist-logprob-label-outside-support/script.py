"""Classifier trained by maximum likelihood with Categorical.log_prob; labels come 1-based from the annotation CSV."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributions import Categorical
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

NUM_CLASSES = 5
model = DDP(nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, NUM_CLASSES)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
g = torch.Generator().manual_seed(rank)
labels_1based = torch.randint(1, NUM_CLASSES + 1, (256,), generator=g)  # 1..5 as in the CSV
feats = torch.randn(256, 12, generator=g)
for step in range(8):
    x, y = feats[step * 32:(step + 1) * 32], labels_1based[step * 32:(step + 1) * 32]
    nll = -Categorical(logits=model(x)).log_prob(y).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    print(rank, step, nll.item())
dist.destroy_process_group()
