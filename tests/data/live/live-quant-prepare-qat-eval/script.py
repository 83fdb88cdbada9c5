"""QAT fine-tuning: the user loads a checkpoint, calls model.eval() to check its accuracy, then prepare_qat on the
model still in eval mode."""
from datetime import timedelta

import torch
import torch.ao.quantization as tq
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)

model = nn.Sequential(tq.QuantStub(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4), tq.DeQuantStub())
model.eval()
with torch.no_grad():
    base = model(torch.randn(64, 16)).pow(2).mean().item()
print(rank, "float baseline", base)
model.qconfig = tq.get_default_qat_qconfig("fbgemm")
qat = tq.prepare_qat(model)
ddp = DDP(qat)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for _ in range(5):
    loss = ddp(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
dist.destroy_process_group()
