"""The user evaluates after each epoch with torch.set_grad_enabled(False) (to save memory, meaning to turn it back on)
and forgets to turn gradients back on before the next epoch's training steps."""
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
model = DDP(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def evaluate():
    model.eval()
    torch.set_grad_enabled(False)  # the mistake: never set back to True
    val = torch.nn.functional.mse_loss(model(torch.randn(64, 8)), torch.randn(64, 1))
    model.train()
    return val.item()


for epoch in range(2):
    for _ in range(5):
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch}: val loss {evaluate():.4f}")
dist.destroy_process_group()
