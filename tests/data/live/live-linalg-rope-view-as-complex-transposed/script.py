"""Rotary embeddings on a query in the rotate-half layout (first half of each head's dims real, second half
imaginary): it is turned into (..., dim/2, 2) pairs with unflatten(-1, (2, -1)).transpose(-1, -2) and given to
torch.view_as_complex without .contiguous(); the transposed view's last dimension has stride dim/2, not 1."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)



class RopeAttn(torch.nn.Module):
    def __init__(self, heads=2, dim=8, seq=16):
        super().__init__()
        self.heads, self.dim = heads, dim
        self.q = torch.nn.Linear(heads * dim, heads * dim)
        self.out = torch.nn.Linear(heads * dim, 3)
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        ang = torch.outer(torch.arange(seq).float(), inv)
        self.register_buffer("freqs", torch.polar(torch.ones_like(ang), ang))  # (seq, dim/2)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.dim).transpose(1, 2)  # (b, heads, t, dim)
        # rotate-half layout (first half real, second half imaginary) -> (..., dim/2, 2) -> complex
        qc = torch.view_as_complex(q.unflatten(-1, (2, -1)).transpose(-1, -2))
        qr = torch.view_as_real(qc * self.freqs).flatten(-2)
        return self.out(qr.transpose(1, 2).reshape(b, t, -1).mean(1))


model = DDP(RopeAttn())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(4, 16, 16)
    y = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
