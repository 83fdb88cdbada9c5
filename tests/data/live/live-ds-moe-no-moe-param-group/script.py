"""MoE model under ZeRO-2 with the optimizer built in the script (AdamW over model.parameters())."""
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
        self.inp = torch.nn.Linear(dim, dim)
        ffn = torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.GELU(), torch.nn.Linear(64, dim))
        self.moe = MoE(hidden_size=dim, expert=ffn, num_experts=4, ep_size=2, k=2)
        self.out = torch.nn.Linear(dim, 1)

    def forward(self, x):
        h, aux, _ = self.moe(torch.relu(self.inp(x)))
        return self.out(h), aux


model = Block()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer)
for _ in range(5):
    y, aux = engine(torch.randn(4, 8, 32))
    loss = y.pow(2).mean() + 0.01 * aux
    engine.backward(loss)
    engine.step()
