"""Per-group learning rates read from a YAML file: PyYAML (YAML 1.1) reads 1e-4 and 1e-3 (no dot) as strings, and
they go into the param groups as they are."""
from datetime import timedelta

import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
torch.manual_seed(0)
with open("train.yaml") as f:
    cfg = yaml.safe_load(f)
backbone = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
head = torch.nn.Linear(32, 4)
model = DDP(torch.nn.Sequential(backbone, head))
ocfg = cfg["optimizer"]
opt = torch.optim.AdamW([{"params": backbone.parameters(), "lr": ocfg["backbone_lr"]},
                         {"params": head.parameters(), "lr": ocfg["head_lr"]}],
                        weight_decay=ocfg["weight_decay"])
for _step in range(cfg["steps"]):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
