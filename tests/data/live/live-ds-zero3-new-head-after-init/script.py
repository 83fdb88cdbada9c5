"""Under ZeRO-3 the user replaces the model's head with a new 3-class Linear on engine.module after
deepspeed.initialize: the new layer's parameters were never registered with ZeRO-3 (nor given to the optimizer)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Linear(16, 32)
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))


model = Net()
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
engine.module.head = torch.nn.Linear(32, 3)  # the new task has 3 classes
for _ in range(10):
    x, y = torch.randn(2, 16), torch.randint(0, 3, (2,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
