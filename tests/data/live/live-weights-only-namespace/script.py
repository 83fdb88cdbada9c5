"""The user resumes from a checkpoint their older training code saved as {"model": state_dict, "args": Namespace,
"epoch": n}; torch 2.6+ loads with weights_only=True by default and refuses the argparse.Namespace inside."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--resume", default="last.pt")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(4, 4)
state = torch.load(args.resume, map_location="cpu")
model.load_state_dict(state["model"])
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
