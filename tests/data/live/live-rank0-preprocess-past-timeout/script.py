"""The usual "main process first" pattern: rank 0 tokenizes and caches the dataset while the others wait at a
barrier, then they load the cache. Rank 0's preprocessing takes longer than the process group's timeout (the user set
a short one, 20 s, as others set NCCL's to minutes while the tokenizing of a large corpus takes longer), so the waiting
rank's barrier times out although nothing is wrong with rank 0."""
import argparse
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
if rank == 0:
    start, rows = time.time(), []
    while time.time() - start < 45:  # "tokenizing" a big corpus: busy CPU for longer than the timeout
        rows.append(torch.randint(0, 50000, (512,)).sum().item())
    torch.save(torch.tensor(rows), "tokens.pt")
    print(f"rank 0 tokenized {len(rows)} rows")
dist.barrier()  # the others wait here for rank 0's cache
tokens = torch.load("tokens.pt")
print(f"rank {rank}: {tokens.numel()} rows")
dist.destroy_process_group()
