"""Under ZeRO-3 the user logs each layer's gradient norm after engine.backward from p.grad: ZeRO-3 reduces the
gradients into its own partitions and leaves p.grad None (deepspeed.utils.safe_get_full_grad gives them)."""
import argparse

import deepspeed
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())
for step in range(10):
    loss = engine(torch.randn(2, 16)).pow(2).mean()
    engine.backward(loss)
    norms = {name: p.grad.norm().item() for name, p in engine.module.named_parameters()}
    engine.step()
    if engine.global_rank == 0:
        print(step, loss.item(), norms)
