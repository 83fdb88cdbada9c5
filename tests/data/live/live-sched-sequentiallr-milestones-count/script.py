"""Warmup, then constant, then cosine with SequentialLR: three schedulers, and milestones written as the three
phases' lengths (one per scheduler) instead of the two boundaries between them."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.optim.lr_scheduler import ConstantLR, CosineAnnealingLR, LinearLR, SequentialLR

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Linear(16, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
warmup, hold, decay = 5, 10, 25
scheduler = SequentialLR(
    optimizer,
    schedulers=[LinearLR(optimizer, start_factor=0.1, total_iters=warmup),
                ConstantLR(optimizer, factor=1.0, total_iters=hold),
                CosineAnnealingLR(optimizer, T_max=decay)],
    milestones=[warmup, hold, decay],  # the mistake: two boundaries are needed, [warmup, warmup + hold]
)
for step in range(warmup + hold + decay):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
dist.destroy_process_group()
