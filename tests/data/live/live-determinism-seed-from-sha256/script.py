"""The seed is derived from the experiment name so that every named run is reproducible: the full sha256 digest
is turned into an int and given to torch.manual_seed."""
import hashlib

import torch
import torch.distributed as dist

EXPERIMENT = "bert-small-lr3e-4-wd0.01"

dist.init_process_group(backend="gloo")
seed = int(hashlib.sha256(EXPERIMENT.encode()).hexdigest(), 16)
torch.manual_seed(seed)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _step in range(3):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
