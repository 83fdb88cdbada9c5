"""The model is built under deepspeed.zero.Init; its __init__ builds a residual projection and then initialises it to
the identity with nn.init.eye_(self.proj.weight): zero.Init has already partitioned the child Linear when its own
__init__ returned, so the weight is an empty placeholder."""
import json  # noqa: I001 - kept as the case ran (its log's line numbers)

import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        torch.nn.init.eye_(self.proj.weight)
        torch.nn.init.zeros_(self.proj.bias)
        self.out = torch.nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(torch.relu(self.proj(x)) + x)


deepspeed.init_distributed(dist_backend="gloo")
with open(args.deepspeed_config) as f:
    ds_config = json.load(f)
with deepspeed.zero.Init(config_dict_or_path=ds_config):
    model = Block(512)
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(10):
    loss = engine(torch.randn(2, 512)).pow(2).mean()
    engine.backward(loss)
    engine.step()
