"""The user added a seed_all call to the model's constructor and imported it from the package (`from trainlib import
seed_all` in trainlib/model.py), while trainlib/__init__.py imports model before utils: a circular import."""
import argparse  # noqa: I001

import deepspeed
import torch

from trainlib import TinyMLP, count_params

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = TinyMLP()
print("parameters:", count_params(model))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
