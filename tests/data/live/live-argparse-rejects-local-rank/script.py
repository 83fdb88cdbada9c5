"""The user's script parses its own arguments with argparse and reads the local rank from the LOCAL_RANK environment
variable (as torchrun does); it does not declare --local_rank, which the DeepSpeed-style launcher passes to every
rank, so argparse rejects the argument."""
import argparse
import os

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser(description="train a small classifier")
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--lr", type=float, default=1e-3)
args = parser.parse_args()  # the mistake: --local_rank=N is not declared
local_rank = int(os.environ["LOCAL_RANK"])

dist.init_process_group(backend="gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), lr=args.lr)
for _epoch in range(args.epochs):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
