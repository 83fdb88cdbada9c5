"""The user's custom clamp Function saves its float bounds with ctx.save_for_backward (only tensors may be saved that
way; plain values go on ctx)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class Clamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, lo, hi)  # the mistake: lo, hi are floats
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad_out):
        x, lo, hi = ctx.saved_tensors
        return grad_out * ((x >= lo) & (x <= hi)), None, None


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return Clamp.apply(self.fc(x), -1.0, 1.0)


model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):  # noqa: B007 - kept as captured
    x = torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

