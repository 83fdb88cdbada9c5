"""The main task's loader drives the loop and the auxiliary task's batches are drawn with next() from one iterator
made before the loop; the auxiliary set is smaller, its iterator runs out partway through the epoch and is never
made again."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
main = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
aux = TensorDataset(torch.randn(96, 16), torch.randn(96, 1))
main_loader = DataLoader(main, batch_size=8, sampler=DistributedSampler(main))
aux_loader = DataLoader(aux, batch_size=8, sampler=DistributedSampler(aux))


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.cls = torch.nn.Linear(32, 4)
        self.reg = torch.nn.Linear(32, 1)

    def forward(self, x, xa):
        return self.cls(self.encoder(x)), self.reg(self.encoder(xa))


model = DDP(MultiTask())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
aux_iter = iter(aux_loader)
for step, (x, y) in enumerate(main_loader):
    xa, ya = next(aux_iter)
    logits, pred = model(x, xa)
    loss = torch.nn.functional.cross_entropy(logits, y) + 0.3 * torch.nn.functional.mse_loss(pred, ya)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
