"""Optimizer step fused into the backward (torch's "optimizer in backward" recipe): one SGD per weight, stepped from a
register_post_accumulate_grad_hook. The user registers it on every module's .weight, but the layers are weight-normed
(torch.nn.utils.parametrizations.weight_norm), whose .weight is computed from weight.original0 / original1 at each
access: a non-leaf tensor."""
import torch
import torch.distributed as dist
from torch.nn.utils.parametrizations import weight_norm

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = torch.nn.Sequential(weight_norm(torch.nn.Linear(16, 32)), torch.nn.ReLU(), weight_norm(torch.nn.Linear(32, 2)))
optimizers = {}


def step_in_backward(p):
    optimizers[p].step()
    optimizers[p].zero_grad()


for mod in model.modules():
    if isinstance(mod, torch.nn.Linear):
        w = mod.weight  # the mistake: with weight_norm this is a tensor computed from the parametrization's originals
        w.register_post_accumulate_grad_hook(step_in_backward)
        optimizers[w] = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    x = torch.randn(8, 16)
    y = torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    for t in (loss.detach(),):
        dist.all_reduce(t)
    print(f"step {step} loss {t.item() / 2:.4f}", flush=True)
dist.destroy_process_group()
