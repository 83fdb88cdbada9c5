"""The user counts the model's parameters with p.ds_numel (as ZeRO-3 examples do) before deepspeed.initialize, but
the model was built outside deepspeed.zero.Init: its parameters are plain torch ones, with no ds_numel yet."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
n_params = sum(p.ds_numel for p in model.parameters())
print(f"model has {n_params / 1e3:.1f}K parameters")
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
