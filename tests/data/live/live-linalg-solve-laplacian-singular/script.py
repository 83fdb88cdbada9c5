"""Graph smoothing: node features are propagated by solving L X = B with the graph Laplacian L = D - A,
which is always singular (its rows sum to zero; here node 5 has no edge, a zero row); no regularization (L + eps * I)
was added."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

n = 6
adj = torch.zeros(n, n)
idx = torch.arange(n)
adj[idx[:-1], idx[1:]] = 1.0  # a chain of the first 5 nodes; node 5 has no edge yet
adj[n - 2, n - 1] = 0.0
adj = adj + adj.T
lap = torch.diag(adj.sum(1)) - adj

model = DDP(torch.nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    feats = torch.randn(n, 8)
    labels = torch.randint(0, 3, (n,))
    smooth = torch.linalg.solve(lap, feats)
    loss = F.cross_entropy(model(smooth), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
