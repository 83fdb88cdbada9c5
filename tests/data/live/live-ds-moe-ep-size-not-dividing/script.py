"""MoE: ep_size=4 copied from an 8-GPU recipe, run on 2 processes."""
import argparse

import deepspeed
import torch
from deepspeed.moe.layer import MoE

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

deepspeed.init_distributed(dist_backend="gloo")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.moe = MoE(hidden_size=16, expert=torch.nn.Linear(16, 16), num_experts=4, ep_size=4, k=1)
        self.out = torch.nn.Linear(16, 1)

    def forward(self, x):
        h, _, _ = self.moe(torch.relu(self.fc(x)))
        return self.out(h)


model = Net()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for _ in range(5):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    engine.step()
