"""A saliency map: the user takes torch.autograd.grad of the loss with respect to the raw input x, but the model is
fed a normalised copy that was .detach()ed, so x is not in the loss's graph."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 16, requires_grad=True)
    y = torch.randint(0, 2, (8,))
    x_norm = ((x - x.mean(0)) / (x.std(0) + 1e-6)).detach()  # the mistake: the detach cuts x out of the graph
    loss = torch.nn.functional.cross_entropy(model(x_norm), y)
    (saliency,) = torch.autograd.grad(loss, x, retain_graph=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} saliency {saliency.abs().mean().item():.4f}", flush=True)
dist.destroy_process_group()
