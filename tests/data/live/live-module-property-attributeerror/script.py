"""A ViT-style patch embedding exposes num_patches as a @property; the property's body reads self.grid_size, which
__init__ never set (it was renamed image_grid). The AttributeError raised inside the property makes Python fall back
to nn.Module.__getattr__, which reports the property itself as missing."""
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class PatchEmbed(nn.Module):
    def __init__(self, img_size=32, patch=8, dim=64):
        super().__init__()
        self.image_grid = img_size // patch
        self.proj = nn.Conv2d(3, dim, patch, patch)

    @property
    def num_patches(self):
        return self.grid_size * self.grid_size

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class TinyViT(nn.Module):
    def __init__(self, dim=64, classes=10):
        super().__init__()
        self.patch_embed = PatchEmbed(dim=dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches, dim))
        self.block = nn.TransformerEncoderLayer(dim, 4, 128, batch_first=True)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        h = self.block(self.patch_embed(x) + self.pos_embed)
        return self.head(h.mean(1))


model = DDP(TinyViT())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(3):
    x, y = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(rank, "done", loss.item())
dist.destroy_process_group()
