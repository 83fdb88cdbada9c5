"""The user's custom row-sum Function: backward returns grad_out as it is (shape [4, 1]) instead of expanding it to
the input's shape [4, 8]."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class RowSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.n = x.shape[1]
        return x.sum(dim=1, keepdim=True)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out.reshape(-1)  # the mistake: should be grad_out.expand(-1, ctx.n)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return RowSum.apply(self.fc(x))


model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):  # noqa: B007 - kept as captured
    x = torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

