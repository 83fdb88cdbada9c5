"""Hand-written attention: the scores are torch.bmm(q, k) with k of shape (batch, seq, dim), without
k.transpose(1, 2); bmm wants (batch, dim, seq) as its second operand."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)



class Attn(torch.nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, 2)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.bmm(q, k) / q.shape[-1] ** 0.5
        ctx = torch.bmm(scores.softmax(-1), v)
        return self.out(ctx.mean(1))


model = DDP(Attn())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(4, 16, 8)
    y = torch.randint(0, 2, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
