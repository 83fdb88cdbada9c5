"""The user collects every rank's validation metrics (a dict) with all_gather_object. They start the output as an
empty list, as for list.append, expecting all_gather_object to fill it; it assigns by index into a list that must
already hold world_size entries ([None] * world_size)."""
import os

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
local = {"rank": rank, "loss": float(torch.rand(1)), "n": 128 + rank}
gathered = []  # the mistake: meant [None] * dist.get_world_size()
dist.all_gather_object(gathered, local)
if rank == 0:
    total = sum(m["n"] for m in gathered)
    print("val loss", sum(m["loss"] * m["n"] for m in gathered) / total, os.environ.get("WORLD_SIZE"))
dist.destroy_process_group()
