"""The user turns gradient accumulation off for a quick run by setting "gradient_accumulation_steps": 0 in the
ds_config (meaning "no accumulation"; 1 is what DeepSpeed means by none)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(16):
    x, y = torch.randn(8, 16), torch.randn(8, 1)
    engine.backward(torch.nn.functional.mse_loss(engine(x), y))
    engine.step()
