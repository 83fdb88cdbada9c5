"""Under ZeRO-3 the user logs the full gradient norm of the first layer with deepspeed.utils.safe_get_full_grad, but
only inside if rank == 0: it all-gathers the gradient partitions, a collective rank 1 never joins (20 s timeout)."""
from datetime import timedelta  # noqa: I001 - kept as the case ran (its log's line numbers)

from deepspeed.utils import safe_get_full_grad

import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    if engine.global_rank == 0:
        grad = safe_get_full_grad(engine.module[0].weight)
        print(step, loss.item(), grad.norm().item())
    engine.step()
