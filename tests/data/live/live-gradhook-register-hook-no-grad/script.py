"""The user logs the gradient reaching the input features with x.register_hook, but the batch x is plain data that
does not require grad."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
input_grad_norms = []
for step in range(3):
    x = torch.randn(8, 16)
    y = torch.randint(0, 2, (8,))
    x.register_hook(lambda g: input_grad_norms.append(g.norm().item()))  # the mistake: x does not require grad
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} input grad {input_grad_norms[-1]:.4f}", flush=True)
dist.destroy_process_group()
