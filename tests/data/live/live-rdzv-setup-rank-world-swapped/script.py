"""The user's setup helper takes (rank, world_size), as in the PyTorch DDP tutorial's setup(rank, world_size); the
call site passes them the other way round."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist


def setup(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=20))


world_size = int(os.environ["WORLD_SIZE"])
rank = int(os.environ["RANK"])
setup(world_size, rank)  # the mistake: the arguments in the wrong order
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
print(dist.get_rank(), dist.get_world_size())
dist.destroy_process_group()
