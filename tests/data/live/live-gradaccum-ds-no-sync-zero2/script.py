"""A DDP training loop ported to DeepSpeed ZeRO-2: the user keeps their own accumulation of 4 micro-batches and
skips the gradient reduction on the first three with engine.no_sync(), as they did with DDP."""
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
        with engine.no_sync():  # the mistake: ZeRO-2 partitions gradients through their reduction
            engine.backward(torch.nn.functional.mse_loss(engine(x), y) / ACCUM)
    else:
        engine.backward(torch.nn.functional.mse_loss(engine(x), y) / ACCUM)
        engine.step()
