"""The user turned on bf16 in ds_config but still feeds the float32 batch straight to the engine."""
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
    x = torch.randn(2, 16)  # float32, the model is now bfloat16
    y = torch.randn(2, 1)
    loss = torch.nn.functional.mse_loss(engine(x).float(), y)
    engine.backward(loss)
    engine.step()
