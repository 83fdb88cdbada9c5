import torch
import torch.distributed as dist
import torch.nn as nn

# Copied from a two-GPU workstation where the second card was the free one.
dist.init_process_group("nccl")
device = torch.device("cuda:1")
model = nn.Linear(64, 64).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(32, 64, device=device)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
