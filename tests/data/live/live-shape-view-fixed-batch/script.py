"""An MNIST-like MLP under DDP flattens its input with x.view(BATCH_SIZE, 784), the configured batch size; the last batch of each rank's shard is smaller (100 samples per rank, batches of 32, last 4), and view refuses it."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


BATCH_SIZE = 32


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = x.view(BATCH_SIZE, 784)  # the mistake: the batch size hard-coded (x.view(x.size(0), -1) / flatten(1))
        return self.fc2(F.relu(self.fc1(x)))


ds = TensorDataset(torch.randn(200, 1, 28, 28), torch.randint(0, 10, (200,)))
loader = DataLoader(ds, batch_size=BATCH_SIZE, sampler=DistributedSampler(ds, shuffle=True, seed=0))
model = DDP(MLP())
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(2):
    loader.sampler.set_epoch(epoch)
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}")
dist.destroy_process_group()
