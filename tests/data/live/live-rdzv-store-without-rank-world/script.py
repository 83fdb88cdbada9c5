"""The user builds the store by hand and passes it to init_process_group, leaving out rank and world_size as with
env://, expecting them to be read from the environment."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size, rank == 0,
                      timeout=timedelta(seconds=20))
dist.init_process_group("gloo", store=store, timeout=timedelta(seconds=20))  # the mistake: no rank=, world_size=
t = torch.ones(2)
dist.all_reduce(t)
print(rank, t)
dist.destroy_process_group()
