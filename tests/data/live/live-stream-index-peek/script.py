"""A streamed feature dataset (IterableDataset, split by rank); the script reads the first sample with dataset[0] to
size the model's input layer, as it did with the map-style version."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()


class Features(IterableDataset):
    def __init__(self, n=256, dim=12):
        self.n, self.dim = n, dim

    def __iter__(self):
        g = torch.Generator().manual_seed(3)
        for i in range(self.n):
            x = torch.randn(self.dim, generator=g)
            if i % world == rank:
                yield x, int(x[0] > 0)


dataset = Features()
in_features = dataset[0][0].numel()
model = DDP(torch.nn.Sequential(torch.nn.Linear(in_features, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in DataLoader(dataset, batch_size=16):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print("done", loss.item())
dist.destroy_process_group()
