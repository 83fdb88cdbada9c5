"""The user freezes the embeddings and every LayerNorm (only the dense layers train) and builds the usual
weight-decay / no-decay param groups by name; every parameter of the no-decay group is frozen."""
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
        self.dense = torch.nn.Linear(32, 32, bias=False)
        self.out = torch.nn.Linear(32, 100, bias=False)

    def forward(self, ids):
        return self.out(torch.relu(self.dense(self.norm(self.embed(ids)))))


model = Block()
for name, p in model.named_parameters():
    if name.startswith(("embed", "norm")):
        p.requires_grad = False
no_decay = ("norm", "bias")
groups = [
    {"params": [p for n, p in model.named_parameters() if not any(k in n for k in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(k in n for k in no_decay)], "weight_decay": 0.0},
]
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=groups)
for _ in range(5):
    ids = torch.randint(0, 100, (4, 8))
    loss = torch.nn.functional.cross_entropy(engine(ids).view(-1, 100), ids.view(-1))
    engine.backward(loss)
    engine.step()
