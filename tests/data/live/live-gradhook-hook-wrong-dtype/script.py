"""To "save memory" the user's hook casts the hidden gradient to bfloat16 and returns it, for float32 activations."""
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
        h = torch.tanh(self.enc(x))
        if h.requires_grad:
            h.register_hook(lambda g: g.to(torch.bfloat16))  # the mistake: a hook may not change the gradient's dtype
        return self.head(h)


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
