"""Under ZeRO-3 the user copies a pretrained projection into the engine's module with weight.copy_() after
deepspeed.initialize, outside deepspeed.zero.GatheredParameters (the weight is a partitioned placeholder)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
pretrained = torch.randn(32, 16)  # stands for torch.load("proj.pt")
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
with torch.no_grad():
    engine.module[0].weight.copy_(pretrained)
for _ in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
