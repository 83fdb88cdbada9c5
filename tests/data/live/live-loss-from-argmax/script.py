"""The user wants to train directly on the error rate they report, under DeepSpeed: the loss is built from argmax
predictions, which carry no gradient."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):  # noqa: B007 - kept as captured
    x, y = torch.randn(2, 8), torch.randint(0, 4, (2,))
    pred = engine(x).argmax(dim=-1)
    loss = (pred != y).float().mean()  # the mistake: argmax is not differentiable
    engine.backward(loss)
    engine.step()
