"""A reproducible train/val split with a seeded generator; the lengths are computed as int(0.9 * n) and
int(0.1 * n), which do not add up to n for n = 1005."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset, random_split

dist.init_process_group(backend="gloo")
ds = TensorDataset(torch.randn(1005, 8), torch.randn(1005, 1))
n = len(ds)
train_ds, val_ds = random_split(ds, [int(0.9 * n), int(0.1 * n)], generator=torch.Generator().manual_seed(42))
loader = DataLoader(train_ds, batch_size=32, sampler=DistributedSampler(train_ds))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in loader:
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
