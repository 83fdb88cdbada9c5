"""A time-series forecaster with hand-written attention on F.scaled_dot_product_attention under plain DDP. The user
builds an additive ALiBi-style distance bias with numpy (float64) and turns it into a tensor with torch.from_numpy,
so attn_mask is float64 while the queries are float32."""
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)
WINDOW, HEADS, DIM = 48, 4, 32


def alibi_bias(n, heads):
    slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)
    dist_ = np.arange(n)[None, :] - np.arange(n)[:, None]
    bias = -np.abs(dist_)[None] * slopes[:, None, None]
    bias[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = -np.inf
    return torch.from_numpy(bias)  # the mistake: float64 stays float64


class Forecaster(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(1, DIM)
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.out = torch.nn.Linear(DIM, 1)
        self.register_buffer("bias", alibi_bias(WINDOW, HEADS))

    def forward(self, series):
        b, s, _ = series.shape
        x = self.inp(series)
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        h = F.scaled_dot_product_attention(q, k, v, attn_mask=self.bias[:, :s, :s])
        return self.out(h.transpose(1, 2).reshape(b, s, DIM))


model = DDP(Forecaster())
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
t = torch.linspace(0, 20, WINDOW + 1)
for step in range(3):  # noqa: B007 - kept as captured
    series = torch.sin(t[None, :] + torch.rand(16, 1) * 6)[..., None]
    loss = F.mse_loss(model(series[:, :-1]), series[:, 1:])
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
