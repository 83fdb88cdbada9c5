"""The user saves checkpoints "from the main process only", as with a plain torch.save, so engine.save_checkpoint
runs on rank 0 alone while rank 1 goes on training (the run's collectives time out after 20 s)."""
import argparse
from datetime import timedelta

import deepspeed
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=20))
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(1, 7):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
    if step % 3 == 0 and dist.get_rank() == 0:
        engine.save_checkpoint("checkpoints", client_state={"step": step})
print("done")
