"""ZeRO-1, the user's own accumulation of 4 micro-batches: the non-boundary micro-batches run under engine.no_sync(),
but engine.step() is called after every backward, inside the with block ("DeepSpeed only applies the update at the
boundary anyway")."""
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
for i in range(16):
    x, y = torch.randn(4, 16), torch.randn(4, 1)
    if (i + 1) % ACCUM != 0:
        with engine.no_sync():
            engine.backward(torch.nn.functional.mse_loss(engine(x), y) / ACCUM)
            engine.step()  # the mistake: step inside the no_sync block
    else:
        engine.backward(torch.nn.functional.mse_loss(engine(x), y) / ACCUM)
        engine.step()
