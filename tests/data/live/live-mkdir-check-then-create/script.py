"""The user creates the feature cache directory only when it is not there yet ("if not exists: mkdir"), which they
believed made it safe to run on every rank; each rank checks before either has created it, and both create it."""
import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
cache_dir = "feature_cache"
fresh = not os.path.exists(cache_dir)
raw = torch.randn(512, 64)
time.sleep(1 + rank)  # stands in for loading the raw data, a little slower on rank 1
if fresh:
    os.mkdir(cache_dir)
torch.save(raw[rank::2], os.path.join(cache_dir, f"part{rank}.pt"))
dist.barrier()
dist.destroy_process_group()
