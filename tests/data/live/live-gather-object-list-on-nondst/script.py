"""Every rank computes per-sample predictions and rank 0 writes them all to one file with gather_object. The user
gives object_gather_list on every rank (copying the all_gather_object pattern); gather_object wants it only on dst."""
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
preds = {"rank": rank, "ids": list(range(rank * 4, rank * 4 + 4)), "pred": torch.randint(0, 5, (4,)).tolist()}
all_preds = [None] * world  # the mistake: must be None on ranks other than dst
dist.gather_object(preds, all_preds, dst=0)
if rank == 0:
    with open("predictions.txt", "w") as f:
        for p in all_preds:
            f.write(f"{p}\n")
dist.destroy_process_group()
