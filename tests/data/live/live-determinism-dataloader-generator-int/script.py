"""Reproducible shuffling: the user passes the seed itself as the DataLoader's generator (generator=SEED) instead
of a torch.Generator seeded with it."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

SEED = 42

dist.init_process_group(backend="gloo")
torch.manual_seed(SEED)
rank, world = dist.get_rank(), dist.get_world_size()
ds = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
shard = torch.utils.data.Subset(ds, range(rank, len(ds), world))
loader = DataLoader(shard, batch_size=8, shuffle=True, generator=SEED)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
