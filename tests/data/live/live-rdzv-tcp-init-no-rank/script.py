"""The user switches from env:// to an explicit tcp:// init_method (as in the torch.distributed docs' example) and
passes world_size but not rank, expecting it to be read from the environment as env:// does."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

addr, port = os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]
world_size = int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", world_size=world_size,
                        timeout=timedelta(seconds=20))  # the mistake: no rank= (tcp:// does not read RANK)
t = torch.ones(2)
dist.all_reduce(t)
print(dist.get_rank(), t)
dist.destroy_process_group()
