"""The user's model calls their own Triton kernel (kernels/fused_gelu.py), which runs only on a GPU; the job runs on
a CPU-only node."""
import argparse  # noqa: I001

import deepspeed
import torch

from kernels import fused_gelu


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 64)
        self.down = torch.nn.Linear(64, 1)

    def forward(self, x):
        return self.down(fused_gelu(self.up(x)))


parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = MLP()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):  # noqa: B007
    loss = engine(torch.randn(4, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
