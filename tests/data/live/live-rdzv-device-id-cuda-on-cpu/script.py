"""The user's script binds the process group to its GPU (device_id=, as the torch 2.3+ docs suggest for NCCL) and is
run on a CPU node with gloo."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

local_rank = int(os.environ["LOCAL_RANK"])
backend = "nccl" if torch.cuda.is_available() else "gloo"
dist.init_process_group(backend, device_id=torch.device("cuda", local_rank),
                        timeout=timedelta(seconds=20))  # the mistake: a CUDA device_id on a CPU-only machine
t = torch.ones(2)
dist.all_reduce(t)
print(dist.get_rank(), t)
dist.destroy_process_group()
