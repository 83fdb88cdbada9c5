"""The user builds the optimizer first and then shards the model with fully_shard (FSDP2): the optimizer keeps the
original parameters, which fully_shard replaced with DTensor ones. Training runs (the optimizer's parameters never get
gradients); the checkpoint at the end, get_state_dict(model, optimizer), fails."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict
from torch.distributed.fsdp import fully_shard

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
parser.add_argument("--ckpt", default="/tmp/live-fsdp2-optimizer-before-shard/last")
args = parser.parse_args()

dist.init_process_group(backend="gloo")
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)  # the mistake: before fully_shard
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(model)
for _ in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
model_sd, optim_sd = get_state_dict(model, opt)
dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=args.ckpt)
dist.destroy_process_group()
