"""Metric learning with DeepSpeed, bf16 enabled in ds_config: the inputs are cast to the engine's bfloat16 as they
should be, but the user's triplet-style loss is computed with torch.cdist directly on the engine's bfloat16
embeddings (no .float() before the loss)."""
import argparse

import deepspeed
import torch
import torch.nn.functional as F
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
torch.manual_seed(0)

model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 16))
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())


def margin_loss(anchor, positive, negative, margin=0.5):
    d_pos = torch.cdist(anchor, positive).diagonal()
    d_neg = torch.cdist(anchor, negative).min(dim=1).values
    return F.relu(d_pos - d_neg + margin).mean()


for step in range(5):
    a, p, n = (torch.randn(8, 32).to(torch.bfloat16) for _ in range(3))
    loss = margin_loss(engine(a), engine(p), engine(n))
    engine.backward(loss)
    engine.step()
    if engine.global_rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
