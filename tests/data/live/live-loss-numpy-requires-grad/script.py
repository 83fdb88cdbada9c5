"""The user keeps a running list of losses as numpy values for a CSV log and converts the loss with .numpy() straight
after the backward, without .detach() (the loss still requires grad)."""
import argparse

import deepspeed
import numpy as np
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
history = []
for step in range(10):
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    history.append(loss.numpy())
    if step % 5 == 4 and engine.global_rank == 0:
        print(f"step {step} mean loss {np.mean(history[-5:]):.4f}", flush=True)
