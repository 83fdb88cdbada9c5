"""A DeepSpeed script copied from a GPU cluster's recipe: deepspeed.init_distributed(dist_backend="nccl"), run on a
CPU-only machine (torch's CPU build)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

deepspeed.init_distributed(dist_backend="nccl")  # the mistake: no NCCL on this machine
model = torch.nn.Linear(8, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
