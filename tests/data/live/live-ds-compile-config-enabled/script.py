"""The user turns on torch.compile through the DeepSpeed config as DeepSpeed 0.14's documentation showed it
("compile": {"enabled": true, "backend": "inductor"}); today's DeepSpeed compiles with engine.compile() and its
"compile" section holds DeepCompile's settings only, and the config model refuses fields it does not know."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(3):
    x = torch.randn(2, 16)
    loss = torch.nn.functional.mse_loss(engine(x), x)
    engine.backward(loss)
    engine.step()
