"""A token-level loss under DeepSpeed: the user takes cross_entropy with reduction='none' to mask the padding tokens,
multiplies by the mask, and forgets to reduce it to one number before backward."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

model = torch.nn.Sequential(torch.nn.Embedding(100, 16), torch.nn.Linear(16, 100))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):  # noqa: B007 - kept as captured
    ids = torch.randint(1, 100, (2, 12))
    ids[:, 9:] = 0  # padding
    logits = engine(ids[:, :-1])
    per_token = torch.nn.functional.cross_entropy(logits.reshape(-1, 100), ids[:, 1:].reshape(-1), reduction="none")
    loss = per_token * (ids[:, 1:].reshape(-1) != 0)  # the mistake: no .sum() / mask.sum()
    engine.backward(loss)
    engine.step()
