"""The user trains a small MLP with DeepSpeed and turns on compilation with engine.compile(), asking for one whole graph
(compile_kwargs={"fullgraph": True}) to be sure nothing falls back to eager. The model's forward guards against
overflow with a Python `if` on a tensor's value (if the activations hold inf, rescale them): a data-dependent branch,
which Dynamo cannot put in a graph, and fullgraph=True makes that graph break an error."""
import argparse

import deepspeed
import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 16)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if torch.isinf(h).any():  # the mistake: a Python branch on a tensor's value inside the compiled region
            h = h / h.abs().max()
        return self.fc2(h)


parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = MLP()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
engine.compile(compile_kwargs={"fullgraph": True})
for _step in range(3):
    x = torch.randn(2, 16)
    loss = torch.nn.functional.mse_loss(engine(x), x)
    engine.backward(loss)
    engine.step()
