"""The user's shared helpers live in a checkout on their laptop, added to sys.path by its absolute path; on the node
that directory does not exist, so the import fails on every rank."""
import argparse
import sys

sys.path.insert(0, "/Users/maria/code/ml-common/src")

import deepspeed  # noqa: E402
import torch  # noqa: E402
from mlcommon.training import set_seed  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
set_seed(0)
model = torch.nn.Linear(16, 1)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
