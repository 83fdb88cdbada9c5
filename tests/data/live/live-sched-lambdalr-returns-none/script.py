"""A warmup-then-decay LambdaLR whose lr_lambda has an if for the warmup and an elif for the decay, but no return
once the decay is over: past step 30 it returns None."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

WARMUP, DECAY_UNTIL = 10, 30


def lr_lambda(step):
    if step < WARMUP:
        return (step + 1) / WARMUP
    elif step < DECAY_UNTIL:
        return max(0.1, 1.0 - (step - WARMUP) / (DECAY_UNTIL - WARMUP))
    # the mistake: no `return 0.1` after the decay, so the function returns None


dist.init_process_group(backend="gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
for step in range(50):
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    if step % 10 == 0:
        print(f"step {step} lr {scheduler.get_last_lr()[0]:.4f}", flush=True)
dist.destroy_process_group()
