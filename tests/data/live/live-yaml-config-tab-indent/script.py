"""The user edited train.yaml in an editor that inserted tabs under `optim:`; they meant an ordinary indented
block. YAML forbids tabs for indentation, so every rank fails to read its config."""
import argparse
import os

import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--config", default="train.yaml")
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()
dist.init_process_group(backend="gloo")
with open(args.config) as f:
    cfg = yaml.safe_load(f)
torch.manual_seed(int(os.environ.get("RANK", 0)))
model = DDP(torch.nn.Linear(cfg["model"]["hidden"], 2))
opt = torch.optim.AdamW(model.parameters(), lr=cfg["optim"]["lr"])
for step in range(cfg["train"]["steps"]):  # noqa: B007
    loss = model(torch.randn(cfg["train"]["batch_size"], cfg["model"]["hidden"])).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
