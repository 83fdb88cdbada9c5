"""The user switched the ds_config scheduler from WarmupLR to WarmupDecayLR (to decay after warmup) and kept
WarmupLR's params, without total_num_steps."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(16, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    x, y = torch.randn(8, 16), torch.randint(0, 2, (8,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
