"""A residual block quantized for int8 eval: forward adds two activations with '+', which after convert are quantized
tensors (the add needs nn.quantized.FloatFunctional)."""
from datetime import timedelta

import torch
import torch.ao.quantization as tq
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.fc1 = nn.Linear(16, 16)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(16, 16)
        self.head = nn.Linear(16, 4)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        h = self.relu(self.fc1(x))
        h = self.fc2(h) + x
        return self.dequant(self.head(h))


model = Block()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for _ in range(5):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
model.qconfig = tq.get_default_qconfig("x86")
prepared = tq.prepare(model)
for _ in range(4):
    prepared(torch.randn(8, 16))
qmodel = tq.convert(prepared)
with torch.no_grad():
    out = qmodel(torch.randn(8, 16))
print(rank, "eval", out.mean().item())
dist.destroy_process_group()
