"""Two-stage training (LLaVA-style): stage 1 trains only the projector head with the backbone frozen and saves a ZeRO-2
checkpoint; stage 2 unfreezes the backbone and resumes from that checkpoint with engine.load_checkpoint, optimizer
states included."""
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


def train(engine, steps):
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(engine(torch.randn(4, 16)), torch.randint(0, 4, (4,)))
        engine.backward(loss)
        engine.step()


# stage 1: head only
model = Net()
for p in model.backbone.parameters():
    p.requires_grad = False
engine, _, _, _ = deepspeed.initialize(args=args, model=model,
                                       model_parameters=[p for p in model.parameters() if p.requires_grad])
train(engine, 3)
engine.save_checkpoint("checkpoints/stage1")

# stage 2: everything trains, resumed from stage 1
model = Net()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
engine.load_checkpoint("checkpoints/stage1")  # the mistake: the optimizer state of another set of parameters
train(engine, 3)
