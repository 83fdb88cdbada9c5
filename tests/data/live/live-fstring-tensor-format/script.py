"""The user accumulates the running loss in a one-element tensor and prints it with an f-string format spec; they
meant a Python float (running_loss.item())."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
model = DDP(torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
running_loss = torch.zeros(1)
for step in range(1, 21):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    running_loss += loss.detach()
    if step % 10 == 0:
        print(f"rank {dist.get_rank()} step {step} avg loss {running_loss / 10:.4f}")
        running_loss.zero_()
dist.destroy_process_group()
