"""The ds_config was written on one GPU (global batch 32 = micro 4 x 8 accumulation steps, all three given) and the
same file is used for a 2-process launch."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(32):
    x, y = torch.randn(4, 16), torch.randn(4, 1)
    engine.backward(torch.nn.functional.mse_loss(engine(x), y))
    engine.step()
