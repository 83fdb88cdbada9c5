"""Progressive unfreezing under ZeRO-2: the encoder is frozen and only the head is given to deepspeed.initialize;
after the first steps the user unfreezes the encoder and adds its parameters to the optimizer initialize returned
with add_param_group, as with a torch optimizer."""
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
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32))
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x)))


model = Net()
for p in model.encoder.parameters():
    p.requires_grad = False
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.head.parameters())
for step in range(6):
    if step == 3:
        for p in model.encoder.parameters():
            p.requires_grad = True
        optimizer.add_param_group({"params": list(model.encoder.parameters()), "lr": 1e-4})
    x, y = torch.randn(4, 16), torch.randint(0, 4, (4,))
    loss = torch.nn.functional.cross_entropy(engine(x), y)
    engine.backward(loss)
    engine.step()
