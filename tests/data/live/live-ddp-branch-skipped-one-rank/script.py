"""A multimodal model: the image tower runs only when the batch has images. The user's data puts all image samples on
rank 0, so rank 1 never uses the image tower's parameters; DDP was wrapped without find_unused_parameters, since
"every parameter is used" (on rank 0 it is). Short process-group timeout while debugging."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()


class Multimodal(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.text = torch.nn.Linear(16, 16)
        self.image = torch.nn.Linear(24, 16)
        self.head = torch.nn.Linear(16, 2)

    def forward(self, text, image=None):
        h = self.text(text)
        if image is not None:  # rank 1's batches never carry images
            h = h + self.image(image)
        return self.head(torch.relu(h))


model = DDP(Multimodal())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(20):
    text = torch.randn(8, 16)
    image = torch.randn(8, 24) if rank == 0 else None
    loss = torch.nn.functional.cross_entropy(model(text, image), torch.randint(0, 2, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
dist.destroy_process_group()
