"""DeepSpeed activation checkpointing configured from the ds_config's activation_checkpointing section, with
partition_activations and contiguous_memory_optimization on to cut fragmentation, but no number_checkpoints (how many
checkpointed layers the contiguous buffers are sized for)."""
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


class Block(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.ff = torch.nn.Sequential(torch.nn.LayerNorm(d), torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                      torch.nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(x)


class Net(torch.nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.inp = torch.nn.Linear(8, d)
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(4))
        self.head = torch.nn.Linear(d, 1)

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = deepspeed.checkpointing.checkpoint(blk, h)
        return self.head(h)


model = Net()
engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
deepspeed.checkpointing.configure(None, deepspeed_config=args.deepspeed_config)
for step in range(5):
    x, y = torch.randn(4, 8), torch.randn(4, 1)
    loss = torch.nn.functional.mse_loss(engine(x), y)
    engine.backward(loss)
    engine.step()
    if engine.global_rank == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
