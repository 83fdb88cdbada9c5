"""The smaller task's loader is repeated with itertools.cycle, which keeps every batch of its first pass and hands
the same dict objects out again; the loop takes the labels out with batch.pop("labels") before model(**batch), so
on the second pass the cached dicts have no "labels" left."""
import itertools
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class DictTask(Dataset):
    def __init__(self, n, classes):
        self.x, self.y = torch.randn(n, 16), torch.randint(0, classes, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"features": self.x[i], "labels": self.y[i]}


class Head(torch.nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, classes))

    def forward(self, features):
        return self.net(features)


dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
big, small = DictTask(256, 4), DictTask(48, 2)
big_loader = DataLoader(big, batch_size=8, sampler=DistributedSampler(big))
small_loader = DataLoader(small, batch_size=8, sampler=DistributedSampler(small))
big_model, small_model = DDP(Head(4)), DDP(Head(2))
opt = torch.optim.AdamW([*big_model.parameters(), *small_model.parameters()], lr=1e-3)
for step, (b_big, b_small) in enumerate(zip(big_loader, itertools.cycle(small_loader))):
    loss = 0.0
    for model, batch in ((big_model, b_big), (small_model, b_small)):
        labels = batch.pop("labels")
        loss = loss + torch.nn.functional.cross_entropy(model(**batch), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
