"""ZeRO-3 head tuning: the user freezes the whole model, calls deepspeed.initialize, and only then unfreezes the head
they mean to train (as their single-GPU script did before building the optimizer)."""
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
        self.backbone = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32))
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Net()
for p in model.parameters():
    p.requires_grad = False
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for p in engine.module.head.parameters():  # the mistake: unfrozen after initialize
    p.requires_grad = True
for _ in range(5):
    loss = torch.nn.functional.cross_entropy(engine(torch.randn(4, 16)), torch.randint(0, 4, (4,)))
    engine.backward(loss)
    engine.step()
