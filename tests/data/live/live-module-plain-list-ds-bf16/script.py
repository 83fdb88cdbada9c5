"""A residual MLP keeps its blocks in a plain Python list (self.blocks = [Block(d) for _ in range(n)]) instead of an
nn.ModuleList: they are not submodules, so DeepSpeed's bf16 engine casts the registered input and output layers to
bfloat16 but not them (nor does it give their weights to the optimizer)."""
import argparse

import deepspeed
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        return x + self.fc(torch.relu(self.norm(x)))


class ResMLP(nn.Module):
    def __init__(self, d_in=20, d=64, n=4, classes=3):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.blocks = [Block(d) for _ in range(n)]
        self.out = nn.Linear(d, classes)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.out(h)


model = ResMLP()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(5):
    x = torch.randn(4, 20, dtype=torch.bfloat16)
    y = torch.randint(0, 3, (4,))
    loss = nn.functional.cross_entropy(engine(x).float(), y)
    engine.backward(loss)
    engine.step()
print(engine.global_rank, "done", loss.item())
