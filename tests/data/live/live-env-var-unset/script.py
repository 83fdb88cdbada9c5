"""The user's script reads its data root from DATA_ROOT, which their ~/.bashrc exports on the login node; the launched
ranks do not get it (it was never exported in the job's environment)."""
import argparse
import os

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
data_root = os.environ["DATA_ROOT"]
model = torch.nn.Linear(4, 4)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
