"""The user copied pretrained.pt from another machine and the copy was cut short (scp interrupted): the file is
there but truncated, and the script fine-tunes from it."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--init", default="pretrained.pt")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Linear(64, 4))
model.load_state_dict(torch.load(args.init, map_location="cpu"))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
