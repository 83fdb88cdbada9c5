"""A script updated for torchrun 2.x, whose docs declare `--local-rank`; the DeepSpeed-style launcher passes
--local_rank=N (underscore), which argparse does not take for the hyphen form."""
import argparse

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", type=int, default=0)  # the mistake: only the hyphen form
parser.add_argument("--epochs", type=int, default=2)
args = parser.parse_args()
dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
for _epoch in range(args.epochs):
    model(torch.randn(4, 8)).sum().backward()
dist.destroy_process_group()
