"""The user's last batch is smaller, so to avoid a recompile they mark the batch dimension dynamic
(torch._dynamo.mark_dynamic(x, 0)); but the model reshapes with the configured batch size (x.view(BATCH, ...)), which
makes Dynamo specialize that dimension to a constant: marking it dynamic is then a constraint violation."""
import torch
import torch._dynamo
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

BATCH, SEQ, DIM = 4, 6, 8

dist.init_process_group(backend="gloo")
torch.manual_seed(0)


class Pool(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(DIM, DIM)

    def forward(self, x):
        x = self.proj(x)
        return x.view(BATCH, SEQ * DIM).mean(dim=1)  # the batch size written into the model's code


model = torch.compile(Pool())
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _step in range(3):
    x = torch.randn(BATCH, SEQ, DIM)
    torch._dynamo.mark_dynamic(x, 0)  # the mistake: dynamic, but the model's view() fixes it
    loss = ddp(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
