"""A linear warmup from zero with LinearLR(start_factor=0.0), as the Trainer's get_linear_schedule_with_warmup
starts: LinearLR's start factor must be above 0."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Linear(16, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.0, end_factor=1.0, total_iters=20)
for step in range(40):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
dist.destroy_process_group()
