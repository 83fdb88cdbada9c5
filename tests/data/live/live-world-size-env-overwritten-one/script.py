"""The user debugged the script in a notebook as one process and left the lines that fake a one-process world at its
top; launched with 2 processes, every rank is told the world has one member."""
import argparse
import os

import deepspeed
import torch

os.environ["WORLD_SIZE"] = "1"  # the mistake: left over from single-process debugging
os.environ.setdefault("MASTER_ADDR", "localhost")
os.environ.setdefault("MASTER_PORT", "29500")

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

deepspeed.init_distributed(dist_backend="gloo")
model = torch.nn.Linear(8, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(3):
    loss = engine(torch.randn(2, 8)).sum()
    engine.backward(loss)
    engine.step()
