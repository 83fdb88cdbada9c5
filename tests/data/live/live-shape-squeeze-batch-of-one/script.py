"""A sequence classifier pools over time with mean(dim=1, keepdim=True) and drops that axis with a bare .squeeze(); the evaluation's last batch holds one sample, so squeeze also drops the batch axis and argmax(dim=1) is out of range (squeeze(1))."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.GRU(8, 32, batch_first=True)
        self.head = nn.Linear(32, 6)

    def forward(self, x):
        h, _ = self.enc(x)  # (B, T, 32)
        return self.head(h.mean(dim=1, keepdim=True)).squeeze()  # the mistake: squeeze() also drops a batch of 1


val = TensorDataset(torch.randn(34, 12, 8), torch.randint(0, 6, (34,)))
loader = DataLoader(val, batch_size=8, sampler=DistributedSampler(val, shuffle=False))  # 17 per rank: 8, 8, 1
model = DDP(Classifier())
correct = torch.zeros(())
with torch.no_grad():
    for x, y in loader:
        preds = model(x).argmax(dim=1)
        correct += (preds == y).sum()
dist.all_reduce(correct)
if rank == 0:
    print(f"val acc {correct.item() / len(val):.3f}")
dist.destroy_process_group()
