"""The user's training script initializes torch.distributed itself, then calls a helper (copied from another repo)
that sets up distributed training again: init_process_group is called twice in each rank."""
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()


def setup_distributed():
    """The helper from the other repo: it does not check dist.is_initialized()."""
    dist.init_process_group(backend="gloo")
    return dist.get_rank(), dist.get_world_size()


dist.init_process_group(backend="gloo")
rank, world = setup_distributed()  # the mistake: the default process group is initialized twice
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
print(rank, world)
