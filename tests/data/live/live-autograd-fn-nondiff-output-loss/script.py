"""The user's custom quantizer Function runs its forward under torch.no_grad()-like detach and returns a tensor that
does not require grad; the model has nothing else, so loss.backward() finds no graph."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class Quantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.round(x * 8) / 8
        ctx.mark_non_differentiable(out)  # the mistake: the output the loss is computed from
        return out

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return Quantize.apply(self.fc(x))


model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):  # noqa: B007 - kept as captured
    x = torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

