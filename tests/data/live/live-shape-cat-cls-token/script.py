"""A ViT-style encoder prepends its learned [CLS] token with torch.cat([self.cls_token, x], dim=1) where cls_token is (1, 1, D): it is not expanded to the batch (cls_token.expand(B, -1, -1)), so the tensors differ in dimension 0."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
torch.manual_seed(0)


class TinyViT(nn.Module):
    def __init__(self, patch=4, dim=32, classes=10):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.zeros(1, 1 + (16 // patch) ** 2, dim))
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(dim, 4, 64, batch_first=True), 1)
        self.head = nn.Linear(dim, classes)

    def forward(self, img):
        x = self.embed(img).flatten(2).transpose(1, 2)  # (B, N, D)
        x = torch.cat([self.cls_token, x], dim=1)  # the mistake: cls_token stays (1, 1, D)
        x = self.encoder(x + self.pos)
        return self.head(x[:, 0])


model = DDP(TinyViT())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _step in range(3):
    img, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    loss = F.cross_entropy(model(img), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
