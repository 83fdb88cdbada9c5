"""Records streamed from a generator function, split by rank; the generator itself is given to the DataLoader as
its dataset (no IterableDataset around it)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()


def stream_records(n=320):
    g = torch.Generator().manual_seed(11)
    for i in range(n):
        x = torch.randn(8, generator=g)
        if i % world == rank:
            yield x, int(x.mean() > 0)


loader = DataLoader(stream_records(), batch_size=16)
model = DDP(torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print("done", loss.item())
dist.destroy_process_group()
