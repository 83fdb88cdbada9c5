"""The user means the gloo backend for a CPU run; the backend name is mistyped."""
import argparse
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

dist.init_process_group(backend="glo", timeout=timedelta(seconds=20))  # the mistake: "gloo" mistyped
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
loss = model(torch.randn(4, 8)).sum()
loss.backward()
dist.destroy_process_group()
