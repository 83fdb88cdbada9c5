"""The user shards the model with fully_shard (FSDP2) and, after training, evaluates on rank 0 only (to print one
validation number) while the other ranks wait in the final barrier. The sharded forward all-gathers each layer's
parameters, a collective the other ranks never call. A short process-group timeout while debugging ends the hang."""
import argparse
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for _ in range(5):
    loss = torch.nn.functional.mse_loss(model(torch.randn(8, 16)), torch.randn(8, 1))
    loss.backward()
    opt.step()
    opt.zero_grad()

if dist.get_rank() == 0:  # the mistake: the sharded forward below needs every rank
    model.eval()
    with torch.no_grad():
        val = torch.nn.functional.mse_loss(model(torch.randn(64, 16)), torch.randn(64, 1))
    print(f"val loss {val.item():.4f}")
dist.barrier()
dist.destroy_process_group()
