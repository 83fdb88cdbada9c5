"""A DDP script from the PyTorch tutorial, written for `python train.py`: it starts one process per device itself with
torch.multiprocessing.spawn and gives each rank=i of world_size=2. Run under `dscluster launch --local 2`, each of the
launcher's two ranks spawns two more: four processes claim ranks 0 and 1 of a world of 2 at the same master port."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=20))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _step in range(5):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    parser.parse_args()
    mp.spawn(worker, args=(2,), nprocs=2, join=True)  # the mistake: the launcher already started one per rank
