"""The user wants torch.distributed's extra checks while chasing a hang and turns them on, at the top of the script,
the way other flags are turned on, with 1; TORCH_DISTRIBUTED_DEBUG takes OFF, INFO or DETAIL."""
import argparse
import os
from datetime import timedelta

os.environ["TORCH_DISTRIBUTED_DEBUG"] = "1"  # the mistake: not one of OFF, INFO, DETAIL

import deepspeed  # noqa: E402
import torch  # noqa: E402

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
