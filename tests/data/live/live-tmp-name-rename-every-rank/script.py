"""The user saves the checkpoint atomically (write a temporary file, then os.replace onto the real name) so that a
crash never leaves half a checkpoint; every rank runs the save, with the same temporary name, so the first rank's
os.replace moves the file away from under the second."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
model = DDP(torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 1024)))
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)


def save_atomic(state, path):
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)


for _step in range(2):
    optimizer.zero_grad()
    model(torch.randn(8, 1024)).pow(2).mean().backward()
    optimizer.step()
    dist.barrier()
    save_atomic({"model": model.module.state_dict(), "optimizer": optimizer.state_dict()}, "last.pt")
dist.destroy_process_group()
