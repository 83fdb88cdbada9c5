"""Before QAT the user fuses conv+bn+relu with fuse_modules on the model in training mode (QAT needs
fuse_modules_qat; fuse_modules folds BatchNorm for eval only)."""
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
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(self.quant(x)))))
        return self.dequant(self.fc(x.flatten(1)))


model = Net().train()
model = tq.fuse_modules(model, [["conv", "bn", "relu"]])
model.qconfig = tq.get_default_qat_qconfig("x86")
qat = tq.prepare_qat(model)
print(rank, qat)
dist.destroy_process_group()
