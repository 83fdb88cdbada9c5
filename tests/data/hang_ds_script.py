"""A user's own DeepSpeed script that hangs one rank on purpose: at --hang-at, rank --hang-rank sleeps
(as a rank stuck in data loading would) while the others wait for it in the gradient all-reduce."""

import argparse
import os
import time

import deepspeed
import torch


def load_batch(step: int, rank: int, args) -> torch.Tensor:
    if step == args.hang_at and rank == args.hang_rank:
        time.sleep(3600)  # the hang
    return torch.randn(2, 8)


parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--steps", type=int, default=1000)
parser.add_argument("--hang-at", type=int, default=3)
parser.add_argument("--hang-rank", type=int, default=2)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
config = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1,
          "optimizer": {"type": "SGD", "params": {"lr": 0.05}}, "zero_optimization": {"stage": 0}}
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
rank = int(os.environ.get("RANK", "0"))
for step in range(args.steps):
    x = load_batch(step, rank, args)
    loss = (engine(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
    time.sleep(0.2)
torch.distributed.destroy_process_group()
