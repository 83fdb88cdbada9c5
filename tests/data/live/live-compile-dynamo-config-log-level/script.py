"""The user follows a torch 2.0 torch.compile tutorial to see what Dynamo does in their DDP training: it sets
torch._dynamo.config.log_level = logging.INFO and torch._dynamo.config.verbose = True. log_level was removed in
torch 2.1 (logging moved to TORCH_LOGS / torch._logging.set_logs), and Dynamo's config module refuses a name it does
not have."""
import logging

import torch
import torch._dynamo
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
torch.manual_seed(0)

torch._dynamo.config.log_level = logging.INFO  # the mistake: an option of torch 2.0's Dynamo config, gone since 2.1
torch._dynamo.config.verbose = True

model = torch.compile(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16)))
ddp = DDP(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _step in range(3):
    x = torch.randn(8, 16)
    loss = torch.nn.functional.mse_loss(ddp(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
