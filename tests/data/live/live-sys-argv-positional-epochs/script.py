"""A quick script that takes its epoch count as its first positional argument (`python script.py 3`). The launcher
puts --local_rank=N before the script's own arguments, so sys.argv[1] is not the number."""
import sys

import torch
import torch.distributed as dist

epochs = int(sys.argv[1])  # the mistake: sys.argv[1] is the launcher's --local_rank=N
dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _epoch in range(epochs):
    loss = model(torch.randn(4, 8)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
