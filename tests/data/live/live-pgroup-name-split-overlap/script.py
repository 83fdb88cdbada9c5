"""Weight-decay / no-decay groups split by name with two conditions that overlap: "weight" in the name for decay,
"norm" or "bias" in the name for no-decay, so the LayerNorm weights are in both groups."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(100, 32)
        self.norm = torch.nn.LayerNorm(32)
        self.dense = torch.nn.Linear(32, 32)
        self.out = torch.nn.Linear(32, 100)

    def forward(self, ids):
        return self.out(torch.relu(self.dense(self.norm(self.embed(ids)))))


model = Block()
groups = [
    {"params": [p for n, p in model.named_parameters() if "weight" in n], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if "norm" in n or "bias" in n], "weight_decay": 0.0},
]
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=groups)
for _ in range(5):
    ids = torch.randint(0, 100, (4, 8))
    loss = torch.nn.functional.cross_entropy(engine(ids).view(-1, 100), ids.view(-1))
    engine.backward(loss)
    engine.step()
