"""The user's script logs torch.cuda.memory_summary() after the first step to watch memory, written on a GPU box;
this node runs the CPU build (no GPUs), so the CUDA-only report fails."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(10):
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    if step == 0 and engine.global_rank == 0:
        print(torch.cuda.memory_summary(abbreviated=True), flush=True)
