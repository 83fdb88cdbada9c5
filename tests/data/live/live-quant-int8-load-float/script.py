"""An int8 model (static PTQ, converted) was saved as a state_dict; the serving script loads that int8 state_dict
into the float model class without quantizing it first (prepare/convert the float model, then load)."""
from datetime import timedelta

import torch
import torch.ao.quantization as tq
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


def make():
    return nn.Sequential(tq.QuantStub(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4), tq.DeQuantStub())


model = make().eval()
model.qconfig = tq.get_default_qconfig("x86")
prepared = tq.prepare(model)
for _ in range(4):
    prepared(torch.randn(8, 16))
int8 = tq.convert(prepared)
if rank == 0:
    torch.save(int8.state_dict(), "int8.pt")
dist.barrier()

served = make().eval()
served.load_state_dict(torch.load("int8.pt"))
print(rank, served(torch.randn(2, 16)))
dist.destroy_process_group()
