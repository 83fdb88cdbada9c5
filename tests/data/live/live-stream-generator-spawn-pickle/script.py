"""An IterableDataset that wraps a record generator made once in __init__; the DataLoader starts its workers with the
spawn start method (copied from a CUDA recipe), which pickles the dataset for each worker."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset


def read_records(rank, world, n=400):
    g = torch.Generator().manual_seed(1234)
    for i in range(n):
        x, y = torch.randn(8, generator=g), int(i % 3 == 0)
        if i % world == rank:
            yield x, y


class RecordStream(IterableDataset):
    def __init__(self, rank, world):
        self.records = read_records(rank, world)

    def __iter__(self):
        return self.records


def main():
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    loader = DataLoader(RecordStream(rank, world), batch_size=16, num_workers=2, multiprocessing_context="spawn")
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


if __name__ == "__main__":
    main()
