"""The user trains with DeepSpeed and pushes each saved checkpoint onto their evaluation queue (queue.py beside the
script); the standard library's queue module has the same name, and torch imports it."""
import argparse  # noqa: I001

import deepspeed
import torch

from queue import JobQueue

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
jobs = JobQueue("eval_jobs.txt")
model = torch.nn.Linear(16, 1)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
engine.save_checkpoint("ckpt")
jobs.push("ckpt")
