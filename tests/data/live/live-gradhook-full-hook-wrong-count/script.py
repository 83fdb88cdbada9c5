"""A full backward hook meant to clip the gradient flowing into a two-input fusion block returns only the first
clipped gradient (a 1-tuple) where the block has two inputs."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class Fusion(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(32, 32)

    def forward(self, a, b):
        return self.proj(a * torch.sigmoid(b))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_a = torch.nn.Linear(16, 32)
        self.enc_b = torch.nn.Linear(16, 32)
        self.fusion = Fusion()
        self.head = torch.nn.Linear(32, 2)

    def forward(self, xa, xb):
        return self.head(self.fusion(self.enc_a(xa), self.enc_b(xb)))


def clip_fusion_grad(module, grad_input, grad_output):
    return (grad_input[0].clamp(-0.5, 0.5),)  # the mistake: one gradient for a block with two inputs


net = Net()
net.fusion.register_full_backward_hook(clip_fusion_grad)
model = DDP(net)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    xa, xb = torch.randn(8, 16), torch.randn(8, 16)
    y = torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(xa, xb), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
