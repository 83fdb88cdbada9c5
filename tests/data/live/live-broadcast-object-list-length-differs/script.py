"""Rank 0 loads the run's config and vocabulary and broadcasts both with broadcast_object_list. On the other ranks
the user prepares a receiving list of one placeholder, not two: object_list must have the same length on every
rank."""
from datetime import timedelta

import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
if rank == 0:
    cfg = {"lr": 3e-4, "batch_size": 16, "warmup": 100}
    vocab = {f"tok{i}": i for i in range(500)}
    objs = [cfg, vocab]
else:
    objs = [None]  # the mistake: meant [None, None]
dist.broadcast_object_list(objs, src=0)
cfg, vocab = objs
print(rank, cfg["lr"], len(vocab))
dist.destroy_process_group()
