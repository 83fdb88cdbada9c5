"""The user builds the rendezvous store by hand (to share a run id through it too) and copies the TCPStore line from
the master's setup code to every rank: is_master=True on all of them."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size, True,
                      timeout=timedelta(seconds=20))  # the mistake: is_master=True on every rank, not rank == 0
if rank == 0:
    store.set("run_id", "exp-42")
run_id = store.get("run_id").decode()
dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size, timeout=timedelta(seconds=20))
t = torch.ones(2)
dist.all_reduce(t)
print(run_id, rank, t)
dist.destroy_process_group()
