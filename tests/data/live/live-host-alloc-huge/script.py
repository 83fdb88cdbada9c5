"""The user precomputes a feature cache for the whole corpus in host memory (samples x seq_len x hidden, fp32):
with 50 million samples that is about 13 TB, far beyond the node's RAM."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser.add_argument("--num_samples", type=int, default=50_000_000)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(32, 32)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
cache = torch.empty(args.num_samples, 2048, 32)
