"""A step-based loop over a sharded stream: the iterator is made once before the epochs and next() is called
steps_per_epoch times each epoch, so the second epoch asks a finished iterator for more."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
SAMPLES, BATCH, EPOCHS = 128, 8, 3


class Shard(IterableDataset):
    def __iter__(self):
        g = torch.Generator().manual_seed(7)
        for i in range(SAMPLES):
            x = torch.randn(8, generator=g)
            if i % world == rank:
                yield x, int(x.sum() > 0)


loader = DataLoader(Shard(), batch_size=BATCH)
steps_per_epoch = SAMPLES // world // BATCH
model = DDP(torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = iter(loader)
for epoch in range(EPOCHS):
    for _step in range(steps_per_epoch):
        x, y = next(batches)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.3f}")
dist.destroy_process_group()
