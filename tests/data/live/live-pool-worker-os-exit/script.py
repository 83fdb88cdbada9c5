"""The user's augmentation helper, run in a ProcessPoolExecutor, calls os._exit(1) on a record it cannot decode (code
copied from a CLI tool): the worker process dies abruptly and the pool raises BrokenProcessPool."""
import os
from concurrent.futures import ProcessPoolExecutor

import torch
import torch.distributed as dist


def augment(i):
    if i == 13:  # an undecodable record
        os._exit(1)
    return torch.randn(16) * 0.1


def main():
    dist.init_process_group(backend="gloo")
    with ProcessPoolExecutor(max_workers=2) as pool:
        data = list(pool.map(augment, range(32)))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16))
    model(torch.stack(data)).sum().backward()


if __name__ == "__main__":
    main()
