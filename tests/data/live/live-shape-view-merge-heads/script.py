"""A small self-attention classifier under DDP: the heads are merged back with out.transpose(1, 2).view(B, T, C), and the transpose leaves a non-contiguous tensor that view cannot reinterpret."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (C // self.heads) ** 0.5
        out = att.softmax(-1) @ v  # (B, heads, T, head_dim)
        out = out.transpose(1, 2).view(B, T, C)  # the mistake: view after transpose (needs .contiguous() or reshape)
        return self.proj(out)


model = DDP(nn.Sequential(nn.Embedding(100, 32), SelfAttention(), nn.Flatten(), nn.Linear(32 * 12, 5)))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    ids = torch.randint(0, 100, (8, 12))
    y = torch.randint(0, 5, (8,))
    loss = F.cross_entropy(model(ids), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
