"""The user trains under ZeRO-3 and saves engine.module.state_dict() with torch.save to get a plain weights file,
then loads it into a plain model for evaluation: ZeRO-3 had partitioned the parameters, so the saved tensors are empty."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed("gloo")


def build():
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))


model = build()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
rank = engine.global_rank
torch.save(engine.module.state_dict(), f"final_rank{rank}.pt")
eval_model = build()
eval_model.load_state_dict(torch.load(f"final_rank{rank}.pt"))
