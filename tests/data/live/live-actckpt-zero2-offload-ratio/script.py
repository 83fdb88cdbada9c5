"""ZeRO-2 with the optimizer offloaded to the CPU, and "ratio": 0.3 added to offload_optimizer to keep part of the
optimizer on the device (a ZeRO-3-only option, partial offload)."""
import argparse
from datetime import timedelta

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=30))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                            torch.nn.Linear(64, 1))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):
    x, y = torch.randn(4, 16), torch.randn(4, 1)
    loss = torch.nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    engine.step()
    if engine.global_rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
