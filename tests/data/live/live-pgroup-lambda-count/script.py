"""The script had two param groups (backbone, head) with one warmup lambda each for LambdaLR; it then split the
head's biases into a third, no-decay group and kept the two lambdas."""
import math
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
backbone = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU())
head = torch.nn.Linear(32, 4)
model = DDP(torch.nn.Sequential(backbone, head))
opt = torch.optim.AdamW([
    {"params": backbone.parameters(), "lr": 1e-4, "weight_decay": 0.01},
    {"params": [head.weight], "lr": 1e-3, "weight_decay": 0.01},
    {"params": [head.bias], "lr": 1e-3, "weight_decay": 0.0},
])
warmup, total = 3, 10
backbone_sched = lambda s: min(1.0, (s + 1) / warmup)  # noqa: E731
head_sched = lambda s: 0.5 * (1 + math.cos(math.pi * s / total))  # noqa: E731
sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=[backbone_sched, head_sched])
for _step in range(total):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
dist.destroy_process_group()
