"""The user shards a model with FSDP2 (fully_shard) and then loads pretrained weights, a plain full state_dict, with
model.load_state_dict: the parameters are now DTensor shards, the checkpoint's tensors are whole plain tensors."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()

dist.init_process_group(backend="gloo")


def build():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))


torch.manual_seed(0)
pretrained = build().state_dict()  # stands for torch.load("pretrained.pt"): a full, unsharded state_dict
model = build()
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(model)
model.load_state_dict(pretrained)  # the mistake: a full state_dict into a sharded model
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
loss = model(torch.randn(8, 16)).pow(2).mean()
loss.backward()
opt.step()
dist.destroy_process_group()
