"""The user meant to train a small model with DeepSpeed; their config helpers live in deepspeed.py beside the script,
and Python imports that file, not the DeepSpeed library, for `import deepspeed`."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    x = torch.randn(4, 16)
    loss = engine(x).pow(2).mean()
    engine.backward(loss)
    engine.step()
