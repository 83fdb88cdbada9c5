"""The user's first run used ZeRO stage 2 (setup.py, ds_config_zero2.json); to fit a bigger batch they switched
ds_config.json to stage 3 and resume from the same checkpoint."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
_, client_state = engine.load_checkpoint("checkpoints")
for _step in range(client_state["step"], 10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
