"""The user counts correct predictions on each rank and sums the count across ranks. On rank 0 the count comes from
a float accuracy computation, on the others from an integer sum, so the ranks call all_reduce with tensors of
different dtypes (float32 on rank 0, int64 elsewhere)."""
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")
rank = dist.get_rank()

preds = torch.randint(0, 3, (32,))
labels = torch.randint(0, 3, (32,))
if rank == 0:
    correct = (preds == labels).float().sum()  # rank 0 also logs accuracy, so it made a float
else:
    correct = (preds == labels).sum()  # int64 on the other ranks
dist.all_reduce(correct)  # the mistake: float32 on rank 0, int64 on rank 1
if rank == 0:
    print(f"accuracy {correct.item() / (32 * dist.get_world_size()):.3f}")
dist.destroy_process_group()
