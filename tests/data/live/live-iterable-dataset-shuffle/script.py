"""Streaming training data: each rank reads its own shard through an IterableDataset; the user wanted the samples
shuffled and passed shuffle=True to the DataLoader, as with a map-style dataset."""
import os  # noqa: F401 - kept as captured (line numbers in log.txt)

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler, IterableDataset  # noqa: F401

dist.init_process_group(backend="gloo")
rank = dist.get_rank()


class Pairs(Dataset):
    def __init__(self, n=64):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 8, generator=g)
        self.y = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def train(loader):
    model = DDP(torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        if hasattr(loader.sampler, "set_epoch"):
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    if rank == 0:
        print("done", loss.item())


class Stream(IterableDataset):
    def __iter__(self):
        g = torch.Generator().manual_seed(rank)
        for _ in range(32):
            yield torch.randn(8, generator=g), torch.randint(0, 2, (), generator=g)


loader = DataLoader(Stream(), batch_size=8, shuffle=True)  # the mistake: shuffle on an IterableDataset
train(loader)
dist.destroy_process_group()
