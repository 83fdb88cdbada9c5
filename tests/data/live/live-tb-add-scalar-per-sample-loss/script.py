"""The user weights each sample's loss, so the criterion has reduction="none"; the backward gets the weighted mean,
but the TensorBoard line (rank 0 only, as the docs say) logs the unreduced per-sample losses as the scalar."""
import argparse

import deepspeed
import torch
from torch.utils.tensorboard import SummaryWriter

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
criterion = torch.nn.CrossEntropyLoss(reduction="none")
writer = SummaryWriter("runs/exp1") if engine.global_rank == 0 else None
for step in range(10):
    x, y = torch.randn(4, 16), torch.randint(0, 4, (4,))
    weights = torch.tensor([1.0, 1.0, 2.0, 0.5])
    losses = criterion(engine(x), y)
    engine.backward((losses * weights).mean())
    engine.step()
    if writer is not None:
        writer.add_scalar("train/loss", losses.detach(), step)
