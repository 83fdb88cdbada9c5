"""The user keeps hyperparameters in hparams.json and left a trailing comma after the last entry (fine in Python,
not in JSON); they meant a valid JSON object."""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

parser = argparse.ArgumentParser()
parser.add_argument("--hparams", default="hparams.json")
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()
dist.init_process_group(backend="gloo")
with open(args.hparams) as f:
    hp = json.load(f)
model = DDP(torch.nn.Linear(hp["hidden"], 2))
opt = torch.optim.SGD(model.parameters(), lr=hp["lr"])
for _ in range(hp["steps"]):
    loss = model(torch.randn(hp["batch_size"], hp["hidden"])).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
