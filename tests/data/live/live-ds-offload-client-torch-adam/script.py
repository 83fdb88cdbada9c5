"""ZeRO-Offload to save memory: the optimizer states go to the CPU, the script keeps its own torch Adam."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer)
for _ in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
