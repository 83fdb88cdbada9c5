"""Each rank logs to logs/train_rank<N>.log with logging.FileHandler; the user meant the logs/ directory to be there
(it is on their laptop, where they once created it), but nothing creates it."""
import logging

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank = dist.get_rank()
log = logging.getLogger("train")
log.setLevel(logging.INFO)
log.addHandler(logging.FileHandler(f"logs/train_rank{rank}.log"))
model = DDP(torch.nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    log.info("step %d loss %.4f", step, loss.item())
dist.destroy_process_group()
