"""The user copied a GPU recipe's ds_config (fp16 enabled) to a CPU-only machine to test the script."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(10):
    x = torch.randn(2, 16, dtype=torch.half)
    loss = engine(x).float().pow(2).mean()
    engine.backward(loss)
    engine.step()
