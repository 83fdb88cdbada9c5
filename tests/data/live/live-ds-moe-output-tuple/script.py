"""Swapping a dense FFN for DeepSpeed's MoE layer inside an existing block."""
import argparse

import deepspeed
import torch
from deepspeed.moe.layer import MoE

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo")


class Block(torch.nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        ffn = torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.GELU(), torch.nn.Linear(64, dim))
        # was: self.ffn = ffn
        self.ffn = MoE(hidden_size=dim, expert=ffn, num_experts=2, ep_size=2, k=1)
        self.out = torch.nn.Linear(dim, 1)

    def forward(self, x):
        x = x + self.ffn(self.norm(x))
        return self.out(x)


model = Block()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(5):
    loss = engine(torch.randn(4, 8, 32)).pow(2).mean()
    engine.backward(loss)
    engine.step()
