"""The user passes activations around a ring by hand (each rank sends its tensor to the next rank and receives the
previous rank's). Every rank calls the blocking recv first and send after it, so every rank waits for a message no
rank has sent yet. Short process-group timeout while debugging."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
rank, world = dist.get_rank(), dist.get_world_size()
nxt, prv = (rank + 1) % world, (rank - 1) % world

layer = torch.nn.Linear(32, 32)
for step in range(10):
    act = layer(torch.randn(4, 32)).detach()
    incoming = torch.empty_like(act)
    dist.recv(incoming, src=prv)  # the mistake: recv before send on every rank
    dist.send(act, dst=nxt)
    print(f"step {step}: got {incoming.norm():.3f} from rank {prv}")
dist.destroy_process_group()
