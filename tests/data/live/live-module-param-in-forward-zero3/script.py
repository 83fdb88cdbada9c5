"""A lazily-sized output layer creates its weight as an nn.Parameter in forward on the first call (when the input
width is known), under ZeRO-3: the parameter appears after deepspeed.initialize, so ZeRO-3 never converted or
partitioned it and the optimizer does not hold it."""
import argparse

import deepspeed
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
torch.manual_seed(0)


class LazyHead(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.weight = None

    def forward(self, x):
        if self.weight is None:
            self.weight = nn.Parameter(torch.randn(self.classes, x.shape[-1]) * 0.02)
        return x @ self.weight.t()


model = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), LazyHead(5))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(5):
    x, y = torch.randn(4, 30), torch.randint(0, 5, (4,))
    loss = nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
print(engine.global_rank, "done", loss.item())
