"""The user's memory-saving in-place ReLU Function modifies its input in place and returns it, without
ctx.mark_dirty(x)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class InplaceRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)  # the mistake: in place, and no ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return grad_out * (y > 0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return InplaceRelu.apply(torch.tanh(self.fc(x)))


model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):  # noqa: B007 - kept as captured
    x = torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

