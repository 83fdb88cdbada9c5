"""Recommendation model with a sparse item table, trained with DeepSpeed ZeRO-2."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed(dist_backend="gloo")
torch.manual_seed(0)


class Recommender(torch.nn.Module):
    def __init__(self, n_items=5000, dim=32):
        super().__init__()
        self.items = torch.nn.Embedding(n_items, dim, sparse=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))

    def forward(self, ids):
        return self.mlp(self.items(ids).mean(1)).squeeze(-1)


model = Recommender()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(5):
    ids = torch.randint(0, 5000, (8, 10))
    loss = torch.nn.functional.mse_loss(engine(ids), torch.rand(8))
    engine.backward(loss)
    engine.step()
    if engine.global_rank == 0:
        print(f"step {step} loss {loss.item():.4f}")
