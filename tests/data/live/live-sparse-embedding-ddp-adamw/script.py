"""Recommendation model: a large item table with sparse=True (to save memory) trained with AdamW under DDP."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)


class Recommender(torch.nn.Module):
    def __init__(self, n_items=5000, dim=32):
        super().__init__()
        self.items = torch.nn.Embedding(n_items, dim, sparse=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))

    def forward(self, ids):
        return self.mlp(self.items(ids).mean(1)).squeeze(-1)


model = DDP(Recommender())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
for step in range(5):
    ids = torch.randint(0, 5000, (16, 10))
    target = torch.rand(16)
    loss = torch.nn.functional.mse_loss(model(ids), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
