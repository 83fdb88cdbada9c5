"""A grouped-query attention block projects q, k and v in one Linear of dim + 2 * kv_heads * head_dim outputs, but splits them with the query's size for k and v ([dim, dim, dim]): the split sizes do not add up to the projection's width."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class GQABlock(nn.Module):
    def __init__(self, dim=64, heads=8, kv_heads=2):
        super().__init__()
        self.dim, self.heads, self.kv_heads, self.hd = dim, heads, kv_heads, dim // heads
        self.qkv = nn.Linear(dim, dim + 2 * kv_heads * self.hd)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(x).split([self.dim, self.dim, self.dim], dim=-1)  # the mistake: k/v are kv_heads * hd
        q = q.view(B, T, self.heads, self.hd).transpose(1, 2)
        k = k.view(B, T, self.kv_heads, self.hd).transpose(1, 2).repeat_interleave(self.heads // self.kv_heads, 1)
        v = v.view(B, T, self.kv_heads, self.hd).transpose(1, 2).repeat_interleave(self.heads // self.kv_heads, 1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.out(y.transpose(1, 2).reshape(B, T, self.dim))


model = DDP(nn.Sequential(nn.Embedding(50, 64), GQABlock(), nn.Linear(64, 50)))
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
for _step in range(3):
    ids = torch.randint(0, 50, (4, 16))
    loss = F.cross_entropy(model(ids[:, :-1]).reshape(-1, 50), ids[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
