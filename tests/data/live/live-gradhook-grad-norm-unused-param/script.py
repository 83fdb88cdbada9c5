"""Per-parameter gradient-norm logging over model.named_parameters(), with find_unused_parameters=True because the
auxiliary head is only used from epoch 2: its parameters have no .grad yet and the logging calls .norm() on None."""
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
        self.aux_head = torch.nn.Linear(32, 4)

    def forward(self, x, use_aux=False):
        h = torch.relu(self.enc(x))
        out = self.head(h)
        if use_aux:
            out = out + self.aux_head(h).mean(-1, keepdim=True)
        return out


model = DDP(Net(), find_unused_parameters=True)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 16)
    y = torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(model(x, use_aux=step >= 20), y)
    opt.zero_grad()
    loss.backward()
    norms = {n: p.grad.norm().item() for n, p in model.module.named_parameters()}  # the mistake: p.grad may be None
    opt.step()
    print(f"step {step} loss {loss.item():.4f} grad norms {norms}", flush=True)
dist.destroy_process_group()
