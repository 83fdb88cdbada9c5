"""The user ported a plain PyTorch loop to DeepSpeed (no ZeRO) and kept loss.backward() where engine.backward(loss) belongs."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(10):
    x = torch.randn(2, 16)
    y = torch.randn(2, 1)
    loss = torch.nn.functional.mse_loss(engine(x), y)
    loss.backward()  # the old loop's call, kept
    engine.step()
    print(f"step {step} loss {loss.item():.4f}")
