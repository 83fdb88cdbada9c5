"""Post-training static quantization of an eval model: the user calls prepare/calibrate/convert on a model with no
QuantStub at its input, so the converted quantized Linear is given a float tensor."""
from datetime import timedelta

import torch
import torch.ao.quantization as tq
import torch.distributed as dist
import torch.nn as nn

dist.init_process_group("gloo", timeout=timedelta(seconds=20))
rank = dist.get_rank()
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
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
out = qmodel(torch.randn(8, 16))
print(rank, "int8 eval", out.shape)
dist.destroy_process_group()
