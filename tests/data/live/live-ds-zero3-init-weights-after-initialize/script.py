"""ZeRO-3: the user re-initializes a layer's weights (xavier) after deepspeed.initialize, as in their non-DeepSpeed script."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for m in engine.module.modules():
    if isinstance(m, torch.nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight)  # the weight is a ZeRO-3 partition now
for _ in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
