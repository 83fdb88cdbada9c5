"""EMA of the weights under ZeRO-3: the EMA copy is made from the plain model before deepspeed.initialize and updated
every step from engine.module's parameters, which ZeRO-3 has partitioned (empty placeholders outside a gather)."""
import argparse
import copy

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1))
ema = copy.deepcopy(model).eval().requires_grad_(False)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())


@torch.no_grad()
def ema_update(ema_model, live_model, decay=0.999):
    for pe, p in zip(ema_model.parameters(), live_model.parameters()):
        pe.mul_(decay).add_(p, alpha=1 - decay)


for step in range(5):  # noqa: B007
    loss = engine(torch.randn(2, 256)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    ema_update(ema, engine.module)
