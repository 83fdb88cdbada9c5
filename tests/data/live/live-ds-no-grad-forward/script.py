"""The user trains a head on a frozen backbone and wraps the forward in torch.no_grad() "to save memory, since the
backbone is frozen anyway" -- the head's forward is inside it too."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32))
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Net()
for p in model.backbone.parameters():
    p.requires_grad = False
engine, _, _, _ = deepspeed.initialize(args=args, model=model,
                                       model_parameters=[p for p in model.parameters() if p.requires_grad])
for _ in range(5):
    x, y = torch.randn(4, 16), torch.randint(0, 4, (4,))
    with torch.no_grad():  # the mistake: the whole forward, head included
        logits = engine(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    engine.backward(loss)
    engine.step()
