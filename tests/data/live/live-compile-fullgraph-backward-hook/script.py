"""The user logs each layer's gradient norm with module backward hooks (register_full_backward_hook) and, to speed up
the DDP training, compiles the model with torch.compile(fullgraph=True). Dynamo cannot trace module-level backward
hooks without compiled autograd: a graph break, which fullgraph=True makes an error at the first forward."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

grad_norms = {}


def log_grad(name):
    def hook(module, grad_input, grad_output):
        grad_norms[name] = grad_output[0].norm().item()
    return hook


model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
for name, layer in model.named_children():
    layer.register_full_backward_hook(log_grad(name))  # module backward hooks inside the compiled model
model = torch.compile(model, fullgraph=True)
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(8, 16)
    loss = torch.nn.functional.mse_loss(ddp(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f} grad norms {grad_norms}")
dist.destroy_process_group()
