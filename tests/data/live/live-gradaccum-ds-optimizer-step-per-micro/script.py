"""ZeRO-2 with gradient_accumulation_steps 4 in the ds_config: the user keeps the optimizer deepspeed.initialize
returned and calls optimizer.step() / optimizer.zero_grad() after each engine.backward, as in their plain PyTorch
loop, instead of engine.step()."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(16):
    x, y = torch.randn(4, 16), torch.randn(4, 1)
    loss = torch.nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    optimizer.step()  # the mistake: the ZeRO optimizer stepped on every micro-batch, not engine.step()
    optimizer.zero_grad()
