"""Houlsby-style bottleneck adapters inserted after each block's feed-forward of a frozen encoder; the adapter is
sized from the feed-forward's inner width (dim_feedforward=128) instead of the model width (d_model=32) that the
block's output has."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=30))
rank = int(os.environ["RANK"])


class Adapter(torch.nn.Module):
    def __init__(self, dim, bottleneck=16):
        super().__init__()
        self.down = torch.nn.Linear(dim, bottleneck)
        self.up = torch.nn.Linear(bottleneck, dim)
        torch.nn.init.zeros_(self.up.weight)
        torch.nn.init.zeros_(self.up.bias)

    def forward(self, h):
        return h + self.up(torch.relu(self.down(h)))


class AdaptedEncoder(torch.nn.Module):
    def __init__(self, d_model=32, dim_feedforward=128, layers=2):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(d_model, 4, dim_feedforward, batch_first=True) for _ in range(layers))
        for p in self.layers.parameters():
            p.requires_grad_(False)
        self.adapters = torch.nn.ModuleList(Adapter(layer.linear1.out_features) for layer in self.layers)
        self.head = torch.nn.Linear(d_model, 3)

    def forward(self, x):
        for layer, adapter in zip(self.layers, self.adapters):
            x = adapter(layer(x))
        return self.head(x.mean(dim=1))


torch.manual_seed(0)
model = DDP(AdaptedEncoder())
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
for _step in range(5):
    x, y = torch.randn(8, 10, 32), torch.randint(0, 3, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
dist.destroy_process_group()
