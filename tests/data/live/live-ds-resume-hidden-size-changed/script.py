"""The user widened the model's hidden layer from 32 to 64 and resumes training from the checkpoint the first run
(hidden 32, setup.py) saved, expecting load_checkpoint to carry over what it can."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--hidden", type=int, default=64)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, args.hidden), torch.nn.ReLU(), torch.nn.Linear(args.hidden, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
_, client_state = engine.load_checkpoint("checkpoints")
for _step in range(client_state["step"], 10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
