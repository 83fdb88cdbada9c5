"""The script sets the rendezvous address itself, to the head node of the cluster it was written on (10.10.0.1);
launched here, the launcher's MASTER_ADDR is overwritten and rank 1 looks for the store at that address."""
import argparse
import os
from datetime import timedelta

import deepspeed
import torch

os.environ["MASTER_ADDR"] = "10.10.0.1"  # the mistake: another cluster's head node

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.Linear(8, 2)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _step in range(3):
    loss = engine(torch.randn(2, 8)).sum()
    engine.backward(loss)
    engine.step()
