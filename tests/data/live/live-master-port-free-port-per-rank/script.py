"""The user wants to avoid 'address already in use' when two jobs share a node, so the script picks a free port
itself (a snippet from a forum answer) and writes it into MASTER_PORT before DeepSpeed initialises. Every rank runs
the snippet, so every rank picks its own port."""
import argparse
import os
import socket
from datetime import timedelta

import deepspeed
import torch


def find_free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

os.environ["MASTER_PORT"] = str(find_free_port())  # the mistake: each rank its own port
deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.Linear(8, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(3):
    loss = engine(torch.randn(2, 8)).sum()
    engine.backward(loss)
    engine.step()
