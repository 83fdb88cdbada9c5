"""Per-module gradient-norm logging with register_full_backward_hook on every submodule, including the ReLU(inplace=True)
activations, which modify their input in place."""
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


net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(inplace=True), torch.nn.Linear(32, 32),
                          torch.nn.ReLU(inplace=True), torch.nn.Linear(32, 2))
for name, mod in net.named_children():
    mod.register_full_backward_hook(log_grad(name))  # the mistake: also on the in-place ReLUs
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 16)
    y = torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} grads {grad_norms}", flush=True)
dist.destroy_process_group()
