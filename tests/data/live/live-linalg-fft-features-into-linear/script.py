"""Frequency features for a classifier taken as torch.fft.rfft(x) (complex) and fed straight into nn.Linear,
without .abs() (magnitude) or torch.view_as_real: a float32 Linear cannot take a complex input."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)



class SpecClassifier(torch.nn.Module):
    def __init__(self, length=64):
        super().__init__()
        self.fc = torch.nn.Linear(length // 2 + 1, 5)

    def forward(self, x):
        spec = torch.fft.rfft(x, dim=-1, norm="ortho")
        return self.fc(spec)


model = DDP(SpecClassifier())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 64)
    y = torch.randint(0, 5, (8,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
