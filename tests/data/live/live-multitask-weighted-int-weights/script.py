"""Task balancing: each sample's weight is 1 // (its task's sample count), integer division (the user meant 1 /),
so every weight is 0 and WeightedRandomSampler's multinomial draw has nothing to draw from."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import ConcatDataset, DataLoader, TensorDataset, WeightedRandomSampler

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
tasks = [TensorDataset(torch.randn(n, 16), torch.randint(0, 4, (n,))) for n in (400, 100, 40)]
data = ConcatDataset(tasks)
counts = [len(t) for t in tasks]
weights = [1 // counts[t] for t, ds in enumerate(tasks) for _ in range(len(ds))]
g = torch.Generator().manual_seed(rank)
sampler = WeightedRandomSampler(weights, num_samples=len(data) // dist.get_world_size(), generator=g)
loader = DataLoader(data, batch_size=16, sampler=sampler)
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, (x, y) in enumerate(loader):  # noqa: B007 - kept as captured
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
