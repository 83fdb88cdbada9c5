"""Two streamed corpora (web text and code), each an IterableDataset split by rank, are joined into one training
stream with ConcatDataset."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import ConcatDataset, DataLoader, IterableDataset

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()


class Corpus(IterableDataset):
    def __init__(self, seed, n):
        self.seed, self.n = seed, n

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed)
        for i in range(self.n):
            ids = torch.randint(0, 100, (16,), generator=g)
            if i % world == rank:
                yield ids


mixed = ConcatDataset([Corpus(seed=1, n=96), Corpus(seed=2, n=32)])
loader = DataLoader(mixed, batch_size=8)
model = DDP(torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, 100)))
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for tokens in loader:
    logits = model(tokens[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 100), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
if rank == 0:
    print("done", loss.item())
dist.destroy_process_group()
