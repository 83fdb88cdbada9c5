"""The user returns the encoder's output to log the gradient norm reaching it after backward, but the output is not a
leaf and retain_grad() was never called, so its .grad is None."""
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
        return self.head(h), h


model = DDP(Net())
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 16)
    y = torch.randint(0, 2, (8,))
    logits, hidden = model(x)  # the mistake: hidden.retain_grad() is missing
    loss = torch.nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    hidden_grad_norm = hidden.grad.norm().item()
    opt.step()
    print(f"step {step} loss {loss.item():.4f} hidden grad {hidden_grad_norm:.4f}", flush=True)
dist.destroy_process_group()
