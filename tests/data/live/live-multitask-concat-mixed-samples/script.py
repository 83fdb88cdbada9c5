"""Two tasks' datasets joined with ConcatDataset into one shuffled loader: the classification task returns (x, y) and
the span task returns (x, y, mask), so a batch holds samples of both structures and the default collate cannot
batch them."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import ConcatDataset, DataLoader, Dataset, DistributedSampler


class ClsTask(Dataset):
    def __init__(self, n):
        self.x, self.y = torch.randn(n, 16), torch.randint(0, 4, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class SpanTask(Dataset):
    def __init__(self, n):
        self.x, self.y = torch.randn(n, 16), torch.randint(0, 4, (n,))
        self.mask = torch.rand(n, 16) > 0.2

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i], self.mask[i]


dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
data = ConcatDataset([ClsTask(100), SpanTask(60)])
loader = DataLoader(data, batch_size=8, sampler=DistributedSampler(data, shuffle=True, seed=0))
model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, batch in enumerate(loader):  # noqa: B007 - kept as captured
    x, y = batch[0], batch[1]
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
