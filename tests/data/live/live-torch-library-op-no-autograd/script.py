"""The user wraps their activation as a torch.library.custom_op (so torch.compile treats it as opaque) and trains
through it, but never registers its backward with torch.library.register_autograd."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


@torch.library.custom_op("mylib::scaled_gelu", mutates_args=())
def scaled_gelu(x: torch.Tensor) -> torch.Tensor:  # the mistake: no register_autograd for it
    return torch.nn.functional.gelu(x) * 1.5


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return scaled_gelu(self.fc(x))


model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):  # noqa: B007 - kept as captured
    x = torch.randn(4, 8)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()

