"""A spectral regularizer takes the eigenvectors of the weight's Gram matrix W W^T (torch.linalg.eigh) and
backpropagates through them; W is initialised orthogonal, so every eigenvalue is 1 and the eigenvector gradient divides
by their differences (0): the user's torch.autograd.set_detect_anomaly(True) stops the backward at LinalgEighBackward0."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

torch.autograd.set_detect_anomaly(True)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(16, 16, bias=False)
        torch.nn.init.orthogonal_(self.proj.weight)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.head(torch.tanh(self.proj(x)))


net = Net()
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x = torch.randn(32, 16)
    y = torch.randint(0, 4, (32,))
    w = net.proj.weight
    evals, evecs = torch.linalg.eigh(w @ w.T)
    spectral = evecs[:, -1].abs().sum()  # mass of the top eigenvector
    loss = F.cross_entropy(model(x), y) + 1e-3 * spectral
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
