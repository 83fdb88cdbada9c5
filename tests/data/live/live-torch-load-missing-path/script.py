"""A user's script whose data path exists on their laptop, not on the node."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(4, 4)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
data = torch.load("/data/train.pt")
