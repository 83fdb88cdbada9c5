"""The user's training script, copied from their InfiniBand cluster's job template: it pins gloo to the cluster's
interface (ib0) so that rendezvous traffic avoids the slow management network. This node has no ib0."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)
args = parser.parse_args()

os.environ["GLOO_SOCKET_IFNAME"] = "ib0"  # the mistake: the interface of another machine
dist.init_process_group("gloo", timeout=timedelta(seconds=20))
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
for _step in range(3):
    loss = model(torch.randn(4, 8)).sum()
    loss.backward()
dist.destroy_process_group()
