"""A hook on the hidden activations is meant to log and clip the per-sample gradient, but it returns the batch mean
(grad.mean(0), shape [32]) instead of the clipped gradient of shape [8, 32]."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(16, 32)
        self.head = torch.nn.Linear(32, 2)

    def forward(self, x):
        h = torch.relu(self.enc(x))
        if h.requires_grad:
            h.register_hook(clip_hidden_grad)
        return self.head(h)


def clip_hidden_grad(grad):
    g = grad.mean(0)  # the mistake: reduces over the batch, so the returned gradient has another shape
    return g.clamp(-1.0, 1.0)


model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 16)
    y = torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
