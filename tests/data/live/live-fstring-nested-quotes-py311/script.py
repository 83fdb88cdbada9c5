"""The user's metrics formatter reuses double quotes inside an f-string, which Python 3.12 allows (PEP 701); the
node runs Python 3.11, where the module imported by the ranks is a syntax error."""
import argparse  # noqa: I001

import deepspeed
import torch

from trainutils.report import format_metrics

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
    print(format_metrics(step, {"loss": loss.item(), "lr": engine.get_lr()[0]}))
