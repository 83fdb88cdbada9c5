"""The user builds the TCPStore by hand from a parameter-server example that counts the master as one more client
than the workers: world_size + 1, with wait_for_workers left on."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size + 1, rank == 0,
                      timeout=timedelta(seconds=20))  # the mistake: the store waits for world_size + 1 clients
dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size, timeout=timedelta(seconds=20))
t = torch.ones(2)
dist.all_reduce(t)
print(rank, t)
dist.destroy_process_group()
