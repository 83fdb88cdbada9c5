"""Multi-task training under DDP: the main task's loader uses a DistributedSampler, the auxiliary task's shard files
are split between ranks by hand (files[rank::world]); five shard files give rank 0 three and rank 1 two, and
zip(main_loader, aux_loader) stops at the shorter one, so rank 1 runs fewer steps and leaves while rank 0 is still in
DDP's gradient all_reduce."""
import os  # noqa: F401
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import ConcatDataset, DataLoader, DistributedSampler, TensorDataset

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)

main_data = TensorDataset(torch.randn(256, 16), torch.randint(0, 4, (256,)))
main_loader = DataLoader(main_data, batch_size=8, sampler=DistributedSampler(main_data))

# the auxiliary corpus comes as shard files of 16 examples each
shards = [TensorDataset(torch.randn(16, 16), torch.randn(16, 1)) for _ in range(5)]
aux_loader = DataLoader(ConcatDataset(shards[rank::world]), batch_size=8, shuffle=True)


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
        self.cls = torch.nn.Linear(32, 4)
        self.reg = torch.nn.Linear(32, 1)

    def forward(self, x_main, x_aux):
        return self.cls(self.encoder(x_main)), self.reg(self.encoder(x_aux))


model = DDP(MultiTask())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step, ((x, y), (xa, ya)) in enumerate(zip(main_loader, aux_loader)):
    logits, pred = model(x, xa)
    loss = torch.nn.functional.cross_entropy(logits, y) + 0.5 * torch.nn.functional.mse_loss(pred, ya)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"rank {rank} step {step} loss {loss.item():.4f}", flush=True)
print(f"rank {rank} finished the epoch after {step + 1} steps", flush=True)
