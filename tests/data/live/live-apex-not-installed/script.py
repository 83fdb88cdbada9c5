"""The user's script (copied from an older NVIDIA example) uses apex's FusedAdam; apex is installed on their
workstation, not in the cluster's environment."""
import argparse

import deepspeed
import torch
from apex.optimizers import FusedAdam

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(4, 4)
optimizer = FusedAdam(model.parameters(), lr=1e-3)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer)
