"""The user rendezvous through a file on the shared file system (file://) and writes its path relative to the working
directory, as for open(): file://dist_init."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method="file://dist_init", rank=rank, world_size=world_size,
                        timeout=timedelta(seconds=20))  # the mistake: file:// needs an absolute path (file:///...)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
print(rank, "ready")
dist.destroy_process_group()
