"""Contrastive training under ZeRO-3 with a learnable temperature that lives in the loss module, outside the model:
the user adds the loss module's parameter as its own param group (no weight decay) in model_parameters, though only
the model goes to deepspeed.initialize."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()


class InfoNCE(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.log_scale = torch.nn.Parameter(torch.tensor(2.659))

    def forward(self, a, b):
        logits = self.log_scale.exp() * torch.nn.functional.normalize(a, dim=-1) @ torch.nn.functional.normalize(
            b, dim=-1).T
        return torch.nn.functional.cross_entropy(logits, torch.arange(a.shape[0]))


model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
criterion = InfoNCE()
groups = [{"params": list(model.parameters()), "weight_decay": 0.01},
          {"params": list(criterion.parameters()), "weight_decay": 0.0}]
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=groups)
for _ in range(5):
    x = torch.randn(4, 16)
    loss = criterion(engine(x), engine(x + 0.01 * torch.randn_like(x)))
    engine.backward(loss)
    engine.step()
