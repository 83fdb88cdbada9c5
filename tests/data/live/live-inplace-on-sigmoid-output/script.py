"""A multi-label model under DeepSpeed: the user zeroes the first (padding) label's probability in place, on the
output of sigmoid, which autograd saved for its backward."""
import argparse

import deepspeed
import torch


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        probs = torch.sigmoid(self.fc(x))
        probs[:, 0] = 0.0  # the mistake: in-place write into sigmoid's saved output
        return probs


parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()

model = Tagger()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(3):  # noqa: B007 - kept as captured
    x, y = torch.randn(2, 8), torch.randint(0, 2, (2, 5)).float()
    loss = torch.nn.functional.binary_cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
