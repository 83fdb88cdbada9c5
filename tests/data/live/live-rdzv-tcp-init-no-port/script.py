"""The user writes the tcp:// init_method from the master's address alone and forgets the port."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
master = os.environ.get("MASTER_ADDR", "127.0.0.1")
dist.init_process_group("gloo", init_method=f"tcp://{master}", rank=rank, world_size=world_size,
                        timeout=timedelta(seconds=20))  # the mistake: tcp://HOST without :PORT
t = torch.ones(2)
dist.all_reduce(t)
print(rank, t)
dist.destroy_process_group()
