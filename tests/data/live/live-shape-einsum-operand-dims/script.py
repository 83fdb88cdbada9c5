"""Multi-query attention written with einsum: the keys have one shared head, (B, T, D), but the equation is the multi-head one, bhqd,bhkd->bhqk, whose second operand needs four dimensions."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class MultiQueryAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * self.hd)  # one key/value head shared by every query head
        self.o = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, _ = x.shape
        q = self.q(x).view(B, T, self.heads, self.hd).transpose(1, 2)  # (B, H, T, hd)
        k, v = self.kv(x).chunk(2, dim=-1)  # (B, T, hd) each
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / self.hd ** 0.5  # the mistake: k has no head dim (bkd)
        out = torch.einsum("bhqk,bkd->bhqd", scores.softmax(-1), v)
        return self.o(out.transpose(1, 2).reshape(B, T, -1))


model = DDP(nn.Sequential(nn.Linear(16, 32), MultiQueryAttention(), nn.Linear(32, 1)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _step in range(3):
    x = torch.randn(4, 10, 16)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
