"""The user keeps an EMA copy of the model for evaluation and makes it with copy.deepcopy of the object
deepspeed.initialize returned (the engine, with its process groups and optimizer) instead of the plain module."""
import argparse
import copy

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
ema = copy.deepcopy(engine)
ema.eval()
for _ in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    with torch.no_grad():
        for pe, p in zip(ema.parameters(), engine.parameters()):
            pe.mul_(0.999).add_(p, alpha=0.001)
