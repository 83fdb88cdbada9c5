"""The training entry point of a package (the user runs it as `python -m trainer.script`): it imports its model with
a relative import. The launcher runs it as a file (`python script.py`), which has no parent package."""
import argparse

import torch
import torch.distributed as dist

from .model import TinyNet  # the mistake: a relative import in a script run as a file

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()
dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(TinyNet())
model(torch.randn(4, 8)).sum().backward()
dist.destroy_process_group()
