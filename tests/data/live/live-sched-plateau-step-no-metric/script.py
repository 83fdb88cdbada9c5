"""The user swaps a StepLR for ReduceLROnPlateau (to lower the lr when the validation loss stalls) and keeps the
loop's `scheduler.step()` as it was, with no metric."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = DDP(torch.nn.Linear(16, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=2)
for epoch in range(3):
    for step in range(4):  # noqa: B007
        x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = torch.nn.functional.cross_entropy(model(torch.randn(32, 16)), torch.randint(0, 2, (32,)))
    print(f"epoch {epoch} val_loss {val_loss.item():.4f}", flush=True)
    scheduler.step()  # the mistake: ReduceLROnPlateau.step needs the metric, scheduler.step(val_loss)
dist.destroy_process_group()
