"""After training, rank 0 writes its metrics with json.dump; the loss it stored is still a tensor (the user meant
loss.item(), a float)."""
import argparse
import json

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(16, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
history = []
for step in range(3):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    history.append({"step": step, "loss": loss.detach()})
if engine.global_rank == 0:
    with open("metrics.json", "w") as f:
        json.dump({"history": history, "final_loss": history[-1]["loss"]}, f, indent=2)
