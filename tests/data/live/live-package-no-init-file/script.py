"""The user's models/__init__.py (`from .tiny_mlp import TinyMLP`) was never committed (.gitignore'd with *.py[co]
rules gone wrong), so on the node models/ is a directory without __init__.py: Python imports it as an empty
namespace package and `from models import TinyMLP` finds no such name."""
import argparse  # noqa: I001

import deepspeed
import torch

from models import TinyMLP

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = TinyMLP()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
