"""The user's script builds its DistributedSampler from its own --world_size argument, which defaults to 1 and is
not passed by the launcher; with 2 processes, rank 1 is outside num_replicas=1."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
parser.add_argument("--world_size", type=int, default=1)
args = parser.parse_args()

dist.init_process_group(backend="gloo")
data = TensorDataset(torch.randn(256, 16), torch.randn(256, 1))
sampler = DistributedSampler(data, num_replicas=args.world_size, rank=dist.get_rank())  # the mistake
loader = DataLoader(data, batch_size=16, sampler=sampler)
model = DDP(torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
dist.destroy_process_group()
