"""The user turns on gradient accumulation from a command-line flag after deepspeed.initialize by assigning
engine.gradient_accumulation_steps = args.accum (as with accelerator.gradient_accumulation_steps), which replaces the
engine's method with an int."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--accum", type=int, default=4)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
engine.gradient_accumulation_steps = args.accum  # the mistake: overwrites DeepSpeedEngine.gradient_accumulation_steps()
for _ in range(16):
    x, y = torch.randn(4, 16), torch.randn(4, 1)
    engine.backward(torch.nn.functional.mse_loss(engine(x), y))
    engine.step()
