"""QAT under DDP: after the fake-quant epochs the user converts the model to int8 and wraps the converted model in
DDP again for a few more fine-tuning steps: a converted model has no float parameters left to train."""
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
model.train()
model.qconfig = tq.get_default_qat_qconfig("x86")
qat = tq.prepare_qat(model)
ddp = DDP(qat)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for _ in range(5):
    loss = ddp(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
qat.eval()
int8 = tq.convert(qat)
ddp = DDP(int8)
print(rank, "fine-tune int8")
dist.destroy_process_group()
