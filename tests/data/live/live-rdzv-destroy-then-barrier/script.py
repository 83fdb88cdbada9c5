"""The user's train() tears down the process group at its end (cleanup() from the DDP tutorial), and the script then
evaluates and waits for every rank in a final barrier, after the group is gone."""
import os  # noqa: F401 - as the user wrote it (the log's line numbers are this file's)
from datetime import timedelta

import torch
import torch.distributed as dist


def cleanup():
    dist.destroy_process_group()


def train(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    cleanup()  # the mistake: the group is destroyed here, before the evaluation below still uses it


dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
train(model)
val = model.module(torch.randn(4, 8)).pow(2).mean().detach()
dist.all_reduce(val)
dist.barrier()
print(rank, val)
