"""The user keeps their logging setup in logging.py beside the script; that name is the standard library's, and every
`import logging` (torch's, DeepSpeed's, their own file's) finds the user's file first."""
import argparse  # noqa: I001

import deepspeed
import torch

from logging import setup

log = setup()
parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(16, 1)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    log.info("step %d loss %.4f", step, loss.item())
