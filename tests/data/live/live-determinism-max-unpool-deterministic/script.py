"""A small SegNet-style autoencoder trained with DDP; the user turned on full determinism for reproducible runs.
The decoder upsamples with max_unpool2d, which has no deterministic implementation."""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

torch.manual_seed(1234)
torch.use_deterministic_algorithms(True)
dist.init_process_group(backend="gloo")


class SegNetLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.dec = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        h = F.relu(self.enc(x))
        h, idx = F.max_pool2d(h, 2, return_indices=True)
        h = F.max_unpool2d(h, idx, 2, output_size=x.shape[-2:])
        return self.dec(h)


model = DDP(SegNetLite())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x = torch.randn(4, 3, 16, 16)
    loss = F.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if dist.get_rank() == 0:
        print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
