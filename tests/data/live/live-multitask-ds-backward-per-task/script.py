"""Multi-task training with a DeepSpeed ZeRO-2 engine: the user calls engine.backward once per task loss (the two
tasks share the encoder) and engine.step once, as one would loss_a.backward(); loss_b.backward() in plain torch; the
shared parameters' gradients are reduced twice in one step."""
import argparse
from datetime import timedelta

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo", timeout=timedelta(seconds=30))
torch.manual_seed(0)


class MultiTask(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU())
        self.cls = torch.nn.Linear(64, 4)
        self.reg = torch.nn.Linear(64, 1)

    def forward(self, x):
        h = self.encoder(x)
        return self.cls(h), self.reg(h)


model = MultiTask()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
engine, _, _, _ = deepspeed.initialize(args=args, model=model, optimizer=optimizer, config="ds_config.json")
for step in range(5):
    x, y_cls, y_reg = torch.randn(4, 16), torch.randint(0, 4, (4,)), torch.randn(4, 1)
    logits, pred = engine(x)
    engine.backward(torch.nn.functional.cross_entropy(logits, y_cls))
    engine.backward(torch.nn.functional.mse_loss(pred, y_reg))
    engine.step()
    if engine.global_rank == 0:
        print(f"step {step} done", flush=True)
