"""The user wants a short process-group timeout while debugging a hang and writes it as a number of seconds, the way
most Python APIs take a timeout: init_process_group(timeout=20)."""
import os

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
dist.init_process_group(backend="gloo", timeout=20)  # the mistake: seconds as an int, not datetime.timedelta
t = torch.ones(4) * rank
dist.all_reduce(t)
print(rank, t)
dist.destroy_process_group()
