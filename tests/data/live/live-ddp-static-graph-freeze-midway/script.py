"""Gradual freezing: after two epochs the user freezes the encoder to fine-tune only the head, while DDP was built
with static_graph=True (copied from a speed-up guide)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32))
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.encoder(x))


dist.init_process_group(backend="gloo")
model = DDP(Net(), static_graph=True)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(4):
    if epoch == 2:
        for p in model.module.encoder.parameters():  # the graph changes under a static graph
            p.requires_grad = False
    for step in range(3):  # noqa: B007
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if dist.get_rank() == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}")
dist.destroy_process_group()
