"""The user read that engine.coalesce_grad_reduction() reduces the gradients of several micro-batches once, and wraps
the 4 accumulated backwards in it; the ds_config has no zero_optimization (ZeRO stage 0, plain data parallel)."""
import argparse

import deepspeed
import torch

ACCUM = 4
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(4):
    with engine.coalesce_grad_reduction():
        for _ in range(ACCUM):
            x, y = torch.randn(4, 16), torch.randn(4, 1)
            engine.backward(torch.nn.functional.mse_loss(engine(x), y))
    engine.step()
