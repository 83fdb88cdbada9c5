"""Activation checkpointing: the user turns on contiguous memory checkpointing in configure() without partition_activations."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo")
deepspeed.checkpointing.configure(None, contiguous_checkpointing=True, num_checkpoints=2)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(10):
    h = deepspeed.checkpointing.checkpoint(engine.module[0], torch.randn(2, 16))
    loss = engine.module[2](torch.relu(h)).pow(2).mean()
    engine.backward(loss)
    engine.step()
