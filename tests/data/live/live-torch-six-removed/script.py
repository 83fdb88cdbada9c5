"""The user logs the gradient norm with a helper copied from an older repository, which imports inf from torch._six
(a module torch removed in 2.0)."""
import argparse  # noqa: I001

import deepspeed
import torch

from grad_utils import grad_norm

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Linear(16, 1)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    print("grad norm", grad_norm(model.parameters()).item())
    engine.step()
