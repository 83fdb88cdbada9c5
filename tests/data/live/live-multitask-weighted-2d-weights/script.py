"""Task balancing with WeightedRandomSampler: the per-sample weights are looked up as task_weight[task_ids] where
task_ids was kept as a (N, 1) column (from the metadata table), so the weights are (N, 1), not a 1-d sequence."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)
meta = torch.cat([torch.zeros(300, 1), torch.ones(80, 1), torch.full((20, 1), 2.0)]).long()  # (N, 1): task id column
x, y = torch.randn(400, 16), torch.randint(0, 4, (400,))
data = TensorDataset(x, y)
counts = torch.bincount(meta.flatten())
task_weight = 1.0 / counts.double()
weights = task_weight[meta]
sampler = WeightedRandomSampler(weights, num_samples=len(data) // dist.get_world_size(),
                                generator=torch.Generator().manual_seed(rank))
loader = DataLoader(data, batch_size=16, sampler=sampler)
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, (xb, yb) in enumerate(loader):  # noqa: B007 - kept as captured
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
